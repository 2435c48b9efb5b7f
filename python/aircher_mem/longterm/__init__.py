"""Long-term memory: facts, decisions and episodes kept across sessions."""

from .store import LongTermMemory

__all__ = ["LongTermMemory"]
