"""The ways in: the command line (:mod:`.cli`), the MCP server (:mod:`.mcp`), and
:mod:`.wire`, the one place a result becomes JSON and an error becomes an exit code
or an error result. Each interface only parses arguments, calls a
:class:`aircher_mem.Memory` verb and hands the result to ``wire``."""

__all__: list[str] = []
