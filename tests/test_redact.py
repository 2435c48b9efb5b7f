"""Redaction: each detector on a secret and on a look-alike that is not one, stable
markers, nested data, PII tags, and no secret in the store file's bytes."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import aircher_mem as am
import pytest
from aircher_mem.engine import EpisodicMemory
from aircher_mem.errors import TaskStateError
from aircher_mem.redact import entropy, marker, pii_tags, redact, redact_value
from conftest import NOW
from hypothesis import given, settings
from hypothesis import strategies as st

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAx1y2z3\nabcDEF==\n-----END RSA PRIVATE KEY-----"


def m(kind: str, secret: str) -> str:
    return f"[REDACTED:{kind}:{hashlib.sha256(secret.encode()).hexdigest()[:12]}]"


# (text, what redact gives back)
POSITIVE = [
    (f"key {AWS_KEY} here", f"key {m('aws_access_key', AWS_KEY)} here"),
    ("id ASIAY34FZKBOKMUTVV7A,", f"id {m('aws_access_key', 'ASIAY34FZKBOKMUTVV7A')},"),
    (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {m('aws_secret_key', AWS_SECRET)}"),
    (f"export GITHUB_TOKEN={GITHUB}", f"export GITHUB_TOKEN={m('github_token', GITHUB)}"),
    ("gho_" + "x" * 36, m("github_token", "gho_" + "x" * 36)),
    (
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        m("github_token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
    ),
    ("slack xoxb-1234567890-abcdefghij", f"slack {m('slack_token', 'xoxb-1234567890-abcdefghij')}"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", m("stripe_key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc")),
    ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", m("stripe_key", "rk_live_4eC39HqLyjWDarjtT1zdp7dc")),
    ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", m("google_api_key", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY")),
    ("sk-ant-api03-AbCdEf0123456789xyz_XYZ", m("anthropic_key", "sk-ant-api03-AbCdEf0123456789xyz_XYZ")),
    ("OPENAI sk-proj-AbCdEf0123456789xyzXYZ", f"OPENAI {m('openai_key', 'sk-proj-AbCdEf0123456789xyzXYZ')}"),
    (f"token {JWT}", f"token {m('jwt', JWT)}"),
    (
        "Authorization: Bearer abcdef0123456789ABCDEF",
        f"Authorization: Bearer {m('bearer_token', 'abcdef0123456789ABCDEF')}",
    ),
    (f"{PEM}\nafter", f"{m('private_key', PEM)}\nafter"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn", m("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn")),
    (
        "postgres://admin:s3cr3tP4ss@db.example.com:5432/app",
        f"postgres://admin:{m('url_password', 's3cr3tP4ss')}@db.example.com:5432/app",
    ),
    ("password=hunter2 next", f"password={m('password', 'hunter2')} next"),
    ('{"password": "hunter 2"}', f'{{"password": "{m("password", "hunter 2")}"}}'),
    ("PASSWORD: swordfish", f"PASSWORD: {m('password', 'swordfish')}"),
    ("mysql --password hunter2 -u root", f"mysql --password {m('password', 'hunter2')} -u root"),
    ("db_passwd='x y z'", f"db_passwd='{m('password', 'x y z')}'"),
    ("api_key=AbC123xYz789QwE456rTy", f"api_key={m('high_entropy', 'AbC123xYz789QwE456rTy')}"),
]

NEGATIVE = [
    "commit 4b825dc642cb6eb9a060e54bf8d69288fbe4904b",  # a git sha
    "id 123e4567-e89b-12d3-a456-426614174000",  # a UUID
    "get_user_session_token() returns AKIA-like names",
    "AKIAIOSFODNN7EXAMPL",  # one short
    "ghp_short and gh_pages",
    "xoxz-1234567890-abcdef",
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "AIzaShort",
    "scikit-learn sk-learn task-manager-and-more-words-here",
    "eyJhbGciOiJIUzI1NiJ9 alone",
    "the bearer of bad news",
    "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
    "https://example.com:8080/path?a=b and git@github.com:org/repo.git",
    "password = get_password()",
    "password=self.password",
    "password: ${DB_PASSWORD}",
    "password: <your password>",
    "password=*****",
    "Password reset link sent",
    "token = 'refresh_access_token_handler'",
    "max_tokens=4096",
]


@pytest.mark.parametrize(("text", "expected"), POSITIVE)
def test_each_detector_redacts_its_secret(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize("text", NEGATIVE)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact(text) == text


# -- every shape a user expects caught ---------------------------------------------------
# (kind, text before, secret, text after): redact(before + secret + after) must give
# exactly before + marker(kind, secret) + after: the secret gone, the words around kept.
GITLAB_PAT = "glpat-" + "Zq8vN3kT1pW5xR7yL2mB"
PYPI = "pypi-AgEIcHlwaS5vcmc" + "CJDk2ZTg1NTcxLTNmMjQtNGE0Mi05ZjE2LTY4ZGE2YjEwNTM1NwACKlszLCJhYmMiXQAABiBx"
HF = "hf_" + "ujzPdeIgxLdGncfBAepfJBdKhoOOLdKLzd"
NPM = "npm_" + "ocJ2isAjIhKtJ0RlgLKOmxgJTeKdNnFRIBXu"
SENDGRID = "SG." + "Stqcbnr3yBdGBLEPH1qhT6" + "." + "1qtc4xatws8phP9nhFyJfm5di4PzJ59FHz5r1pY4OjE"
AZURE_KEY = "UziuGjQATTO6DSRqwEyBsbryPjv57vX3nytJNK+H9VILablLDZguhbtVtnKocmN6zXRm/LYODo/xhGOw5LK6KQ=="
FINE_GRAINED = (
    "github_pat_"
    + "11ABCDEFG0"
    + "A1b2C3d4E5f6G7h8I9j0K1"
    + "_"
    + "BenQtYh5Xj8TPQxjq4i9DoV8gz4FkQ1okTBGzvAmwufUxbvJDCTbyvHNsG9"
)
DISCORD_BOT = "MTA4NzI3ODU2NDk1MjM0NTY3OA" + ".GhKd9L." + "tDDb_xHKas1VOqg6YYZYn9ZhyiA4xyzabc"
SHAPES = [
    # The review's list: each was stored in clear.
    ("url_password", "postgres://user:", "p@ss/w0rd", "@db.example.com:5432/app"),
    ("url_password", "REDIS_URL=redis://:", "s3cretpw", "@cache.example.com:6379/0"),
    ("url_password", "amqp://guest:", "gu@st/42", "@rabbit:5672/ vhost"),
    ("url_password", "fetch https://deploy:", "Tr1cky@pw", "@cdn.example.com/logo@2x.png now"),
    ("password", "the staging password is ", "hunter2hunter2", " so rotate it"),
    ("password", "password for prod: ", "Zebra!42", " (do not share)"),
    ("password", "then passwd ", "Tr0ub4dor", " to unlock"),
    ("password", "The password is `", "swordfish", "` for now"),
    ("password", "my password was changed to ", "Winter2024!", " today"),
    ("password", "login with pwd=", "hunter2x", " next"),
    ("password", "export DB_PASS=", "Sup3rS3cret", "\nexport DB_USER=app"),
    ("password", "SMTP_PASSWD: ", "mail-pw-7", "\n"),
    ("password", "PGPASSWORD=", "pg-pass-77", " psql -h db"),
    ("password", "STRIPE_SECRET=", "StripeSecret99", " ./deploy"),
    ("credential", "API_KEY=", "abc123", " ./run.sh"),
    ("credential", "curl -H 'X-Api-Key: ", "k3y-v4lue", "' https://api.example.com"),
    ("high_entropy", "MAILGUN_KEY=", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0", ""),
    ("card_number", "paid with ", "4111 1111 1111 1111", " exp 12/29"),
    ("card_number", "mastercard ", "5555-5555-5555-4444", " ok"),
    ("card_number", "amex ", "378282246310005", "."),
    ("gitlab_token", "GITLAB_TOKEN is ", GITLAB_PAT, " (rotate)"),
    ("gitlab_token", "git clone https://oauth2:", GITLAB_PAT, "@gitlab.com/group/app.git"),
    ("gitlab_token", "deploy token ", "gldt-" + "Zy9Xw8Vu7Ts6Rq5Po4Nm", " expires"),
    ("gitlab_token", "runner ", "glrt-t1_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0" + ".01.1a2b3c4d5", " registered"),
    ("gitlab_token", "register with ", "GR1348941" + "PQrAlrwIUScCvc8l6dWY", " today"),
    (
        "azure_key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=",
        AZURE_KEY,
        ";EndpointSuffix=core.windows.net",
    ),
    (
        "azure_key",
        "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=",
        "cDR08GSsaPcA9bArPcZm9FveqizK7c0rUVdBDk3uSvI=",
        "",
    ),
    (
        "url_signature",
        "https://acct.blob.core.windows.net/c/b.txt?sv=2022-11-02&sr=b&sp=r&sig=",
        "AbCdEf0123456789%2Bxyz%3D",
        " expires tomorrow",
    ),
    # Wider: shapes a demanding user expects.
    ("private_key", "key:\n", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBk\n-----END EC PRIVATE KEY-----", "\nend"),
    ("npm_token", "//registry.npmjs.org/:_authToken=", NPM, "\n"),
    ("pypi_token", "TWINE_PASSWORD=", PYPI, " twine upload dist/*"),
    ("huggingface_token", "HF_TOKEN=", HF, " python app.py"),
    ("github_token", "GH_TOKEN=", FINE_GRAINED, " gh pr list"),
    ("twilio_key", "twilio api key ", "SK" + "0123456789abcdef0123456789abcdef", " set"),
    ("sendgrid_key", "SENDGRID ", SENDGRID, " configured"),
    (
        "slack_webhook",
        "curl -X POST https://hooks.slack.com/services/",
        "T024BE7LD/B01234ABCDE/AbCdEfGhIjKlMnOpQrStUvWx",
        " -d @msg.json",
    ),
    (
        "discord_webhook",
        "https://discord.com/api/webhooks/123456789012345678/",
        "76UMFxFkM-R5Kjp1vRt_1fjORS-6ilI8ihN5KXSc7Tvo-hBKqFYY-kv5ZJr3J1TWDtkw",
        " posted",
    ),
    ("discord_token", "bot.run('", DISCORD_BOT, "')"),
    ("google_oauth_secret", '"client_secret": "', "GOCSPX-" + "Zq8vN3kT1pW5xR7yL2mB9cH4dF6g", '"'),
    ("bearer_token", "curl -H 'Authorization: Basic ", "dXNlcjpwYXNzd29yZA==", "' https://api.example.com"),
    ("bearer_token", 'curl -H "Authorization: Bearer ', "abcdef0123456789ABCDEF", '" https://api.example.com/v1'),
    ("password", "mysql -u root -p", "Hunter2x", " shop"),
    ("password", "mysqldump -uroot -p'", "my pass", "' shop > out.sql"),
    ("password", "pg_dump --password=", "s3cr3t!", " shop"),
    ("password", "app --client-secret ", "abc123def", " --verbose"),
    ("password", "sshpass -p '", "Zq9!pass", "' ssh root@host"),
    ("password", "docker login -u bob -p ", "Hunter22", " registry.example.com"),
    ("password", "redis-cli -h cache -a ", "Sup3rPw", " ping"),
    ("password", "curl -u admin:", "S3cr3t", " https://api.example.com"),
    ("password", '{"user": "bob", "password": "', "hunter 2", '"}'),
    ("password", '{"user": "bob", "pass": "', "hunter22", '"}'),
    ("aws_secret_key", "aws_secret_access_key = ", AWS_SECRET, "\nregion = eu-west-1"),
    ("stripe_key", "STRIPE_WEBHOOK=", "whsec_" + "AbCdEfGhIjKlMnOpQrStUvWx", ""),
    ("slack_token", "SLACK_APP=", "xapp-1-A0123456789-1234567890123-abcdef0123456789", ""),
    ("iban", "IBAN ", "DE89 3704 0044 0532 0130 00", " (Berlin)"),
    ("iban", "pay to ", "GB82WEST12345698765432", ", thanks"),
    ("ssn", "SSN ", "123-45-6789", " on file"),
    ("ssn", "ssn: ", "078051120", " (test)"),
]


@pytest.mark.parametrize(
    ("kind", "before", "secret", "after"), SHAPES, ids=[f"{i}-{shape[0]}" for i, shape in enumerate(SHAPES)]
)
def test_each_shape_is_redacted_and_the_words_around_it_stay(kind: str, before: str, secret: str, after: str) -> None:
    out = redact(before + secret + after)
    assert out == before + m(kind, secret) + after
    assert secret not in out
    assert redact(out) == out


def test_the_shape_table_is_wide() -> None:
    assert len(SHAPES) >= 40
    assert len({(before, secret) for _, before, secret, _ in SHAPES}) == len(SHAPES)
    assert len({kind for kind, *_ in SHAPES}) >= 25


# Ordinary texts that look a little like secrets: each comes out unchanged.
ORDINARY = [
    "released v1.2.3 and 2.0.0-rc.1 on python 3.11.4",
    "fixed in 4b825dc642cb6eb9a060e54bf8d69288fbe4904b, see also a1b2c3d",
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "edit /home/user/project/src/main.py and C:\\Users\\bob\\key.txt",
    "see https://example.com/docs/page?id=42#section and https://user@example.com/x",
    "https://example.com:8080/path?email=ana@example.com",
    "the password field is required",
    "Password reset link sent; the password is too short",
    "pass=True",
    "if done:\n    pass\nelse:\n    retry()",
    "key: value\nname: app\nsort_key: created_at\nprimary_key: id",
    "first pass: tokenize the input",
    "order 4111111111111112 shipped",  # fails the Luhn check
    "order 1234567812345678, ts 1700000000000 and 1700000000123456789",  # no card brand
    "scores 1234 5678 9012 3456",
    "on 2024-01-15 at 10:30:00Z, build 2024-01-15T10:30:00",
    "ping 192.168.1.10 and 10.0.0.1:8080, ::1",
    "document.getElementById('submitButton').addEventListener('click', onSubmit)",
    "max_tokens=4096, MAX_TOKEN=4096, num_tokens: 12",
    "token = 'refresh_access_token_handler'",
    "PWD=/home/user/project OLDPWD=/tmp",
    "ssh -p 2222 user@host; mkdir -p build; pytest -p no:cacheprovider",
    "docker run -p 8080:80 -u 1000:1000 image",
    "mysql -u root -p shop",  # -p then a space: mysql prompts, shop is the database
    "sudo passwd alice",
    "ModuleNotFoundError: No module named 'hf_transfer'",
    "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "isbn 978-3-16-148410-0, part 000-12-3456, 987-65-4321",
    "api_key = os.environ['API_KEY']",
    "s3_key: reports/2024.csv, cache_key: users_by_id",
    "mail ana@example.com or call +1 415-555-0132",  # PII: tagged, not removed
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert redact(text) == text


def test_the_ordinary_table_is_wide() -> None:
    assert len(ORDINARY) >= 15


def test_values_under_credential_keys() -> None:
    assert redact_value(
        {
            "DB_PASS": "x1y2",
            "PGPASSWORD": "pw",
            "pass": "hunter22",
            "api_key": "abc123",
            "MAILGUN_KEY": "key-3ax6",
            "sort_key": "name",
            "s3_key": "a1.png",
            "token": "NUMBER",
            "PWD": "/home/u",
            "pwd": "hunter22",
        }
    ) == {
        "DB_PASS": m("password", "x1y2"),
        "PGPASSWORD": m("password", "pw"),
        "pass": m("password", "hunter22"),
        "api_key": m("credential", "abc123"),
        "MAILGUN_KEY": m("credential", "key-3ax6"),
        "sort_key": "name",
        "s3_key": "a1.png",
        "token": "NUMBER",
        "PWD": "/home/u",
        "pwd": m("password", "hunter22"),
    }


def test_card_numbers_iban_and_ssn_are_redacted_not_tagged() -> None:
    text = "card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, SSN 123-45-6789"
    assert pii_tags(redact(text)) == []
    assert redact(text) == (
        f"card {m('card_number', '4111 1111 1111 1111')}, IBAN {m('iban', 'DE89 3704 0044 0532 0130 00')}, "
        f"SSN {m('ssn', '123-45-6789')}"
    )


# Text made of pieces of secrets, their contexts and separators, shuffled.
_PIECES = [piece for shape in SHAPES for piece in shape[1:]] + [
    ":",
    "@",
    "/",
    "=",
    " ",
    "\n",
    "'",
    '"',
    "`",
    "://",
    "==",
    ":=",
    "-p",
    " is ",
    "password",
    "key",
    "token",
    "4111 ",
    "-45-",
    "-----BEGIN PRIVATE KEY-----",
    "[REDACTED:x:0123456789ab]",
]
_TEXTS = st.lists(st.sampled_from(_PIECES) | st.text(max_size=8), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXTS | st.text(max_size=300))
def test_redaction_never_raises_and_is_idempotent(text: str) -> None:
    once = redact(text)
    assert isinstance(once, str)
    assert redact(once) == once


@settings(max_examples=200, deadline=None)
@given(prefix=st.text(max_size=40), suffix=st.text(max_size=40), shape=st.sampled_from(SHAPES))
def test_a_shape_on_its_own_line_is_gone_whatever_surrounds_it(
    prefix: str, suffix: str, shape: tuple[str, ...]
) -> None:
    _, before, secret, after = shape
    assert secret not in redact(f"{prefix}\n{before}{secret}{after}\n{suffix}")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The second "=" belongs to the separator, on every pass.
        ("TWINE_PASSWORD==0", f"TWINE_PASSWORD=={m('password', '0')}"),
        ("password:=x9", f"password:={m('password', 'x9')}"),
        # A URL ending in "@": the password runs to the "@" before it.
        ("postgres://user::@KEY=1@", f"postgres://user:{m('url_password', ':')}@KEY=1@"),
        # A password longer than the prose rule's look-ahead: replaced whole.
        ("the password is " + "A1" * 200, f"the password is {m('password', 'A1' * 200)}"),
        # Once the password is replaced, the four groups after it are a card number.
        (
            "TWINE_PASSWORD=4111 4111 1111 1111 1111",
            f"TWINE_PASSWORD={m('password', '4111')} {m('card_number', '4111 1111 1111 1111')}",
        ),
    ],
)
def test_cases_the_idempotence_property_found(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected


# Pathological lines, 1 MB each: the patterns cannot backtrack without bound (the
# time of each is in the report of the change, not asserted here).
@pytest.mark.slow
@pytest.mark.parametrize(
    ("unit", "changed"),
    [
        ("a:", False),
        ("@", False),
        ("a://a:", False),
        ("key=", False),
        ("1234 ", False),
        ("password is ", False),
        ("pypi-AgE", False),  # one run of token characters, too long for a token
        ("mysql -p", True),
        ("curl -u a:", True),
    ],
)
def test_a_megabyte_of_a_repeated_piece(unit: str, changed: bool) -> None:
    text = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
    once = redact(text)
    assert (once != text) is changed
    assert redact(once) == once


def test_markers_are_stable_and_group_equal_secrets() -> None:
    once = redact(f"a {AWS_KEY} b {AWS_KEY} c AKIAIOSFODNN7EXAMPLF")
    first, second, third = re.findall(r"\[REDACTED:[a-z_]+:[0-9a-f]{12}\]", once)
    assert first == second == marker("aws_access_key", AWS_KEY) != third
    assert redact(f"x {AWS_KEY}") == f"x {first}"  # the same in another call


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200) | st.sampled_from([t for t, _ in POSITIVE] + NEGATIVE))
def test_redacting_twice_changes_nothing(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=100, deadline=None)
@given(prefix=st.text(max_size=30), suffix=st.text(max_size=30), secret=st.sampled_from([AWS_KEY, GITHUB, JWT]))
def test_a_secret_in_any_text_is_gone(prefix: str, suffix: str, secret: str) -> None:
    assert secret not in redact(f"{prefix} {secret} {suffix}")


def test_nested_structures_and_key_names() -> None:
    value: Any = {
        "password": "pw",  # any value under a password-like key
        "apiKey": "Zx81Kq09Lm27Pw45Rt63",  # high entropy under a token-like key
        "session_id": "abc",  # short: not a secret
        "Authorization": "Bearer abcdefgh12345678",
        "user": "bob",
        "password_hint": "",
        "env": [{"CLIENT_SECRET": "s3cr3t"}, ("x", f"token {GITHUB}")],
        f"key-{AWS_KEY}": 1,
        3: "three",
        "count": 7,
    }
    assert redact_value(value) == {
        "password": m("password", "pw"),
        "apiKey": m("high_entropy", "Zx81Kq09Lm27Pw45Rt63"),
        "session_id": "abc",
        "Authorization": f"Bearer {m('bearer_token', 'abcdefgh12345678')}",
        "user": "bob",
        "password_hint": "",
        "env": [{"CLIENT_SECRET": m("password", "s3cr3t")}, ["x", f"token {m('github_token', GITHUB)}"]],
        f"key-{m('aws_access_key', AWS_KEY)}": 1,
        3: "three",
        "count": 7,
    }


def test_redact_value_refuses_deep_data_and_redact_refuses_non_text() -> None:
    deep: Any = "x"
    for _ in range(100):
        deep = [deep]
    with pytest.raises(am.InvalidInputError, match="nested deeper"):
        redact_value(deep)
    with pytest.raises(am.InvalidInputError, match="str"):
        redact(None)  # type: ignore[arg-type]


def test_entropy() -> None:
    assert entropy("") == 0.0 and entropy("aaaa") == 0.0 and entropy("abcd") == 2.0


@pytest.mark.parametrize(
    ("text", "tags"),
    [
        ("mail ana@example.com", ["email"]),
        ("call +1 415-555-0132", ["phone"]),
        ("(415) 555-0132 or ana.b+x@mail.example.org", ["email", "phone"]),
        ("+44 20 7946 0958", ["phone"]),
        ("+14155550132", ["phone"]),
        ("2024-01-15 at 10:00, v1.2.3 on 192.168.1.1, ts 1700000000", []),
        ("git@github.com:org/repo.git", []),
        ("", []),
    ],
)
def test_pii_tags(text: str, tags: list[str]) -> None:
    assert pii_tags(text) == tags
    assert redact(text) == text  # tagged, never removed


def test_pii_tags_of_nested_data() -> None:
    assert pii_tags({"to": ["ana@example.com"], "415-555-0132": 1}) == ["email", "phone"]
    assert pii_tags([1, None, {"a": "b"}]) == []


@pytest.mark.slow
def test_a_10_mb_text_is_fast_enough() -> None:
    big = "x" * 10_000_000
    assert redact(big) == big and pii_tags(big) == []


def test_secrets_never_reach_the_file(tmp_path: Path) -> None:
    path = tmp_path / "memory.duckdb"
    url = "https://deploy:Sup3rS3cretPw@git.example.com/repo.git"
    with EpisodicMemory(path, session_id=f"s1-{GITHUB}", clock=lambda: NOW) as mem:
        assert mem.session_id == f"s1-{m('github_token', GITHUB)}"
        mem.start_task("t1", f"rotate {AWS_KEY}")
        mem.record_tool_execution(
            "bash",
            {"cmd": f"git clone {url}", "env": {"AWS_ACCESS_KEY_ID": AWS_KEY, "GH": GITHUB}, "to": "ana@example.com"},
            result={"stdout": f"using {GITHUB}"},
            success=False,
            error_message=f"fatal: could not read from {url}",
            file_path="deploy.sh",
        )
        mem.record_file_interaction("deploy.sh", "edit", context=f"key={AWS_KEY}", changes_summary=f"drop {GITHUB}")
        mem.record_file_interaction("deploy.sh", "read", session_id=f"other-{AWS_KEY}")
        mem.record_tool_execution("bash", {"file_path": "deploy.sh"}, success=True)  # error-then-fix pattern
        mem.store_snapshot(
            {
                "timestamp": NOW,
                "session_id": f"s1-{GITHUB}",
                "items": [{"id": GITHUB}],
                "total_tokens": 1,
                "reason": "r",
            }
        )
        mem.record_learning("common_error", {"url": url, "phone": "+1 415-555-0132"}, 0.5)
        mem.complete_task("t1", f"rotated {AWS_KEY}")
        # A task id holding a secret: kept redacted, found by the id as given.
        secret_task = f"t2-{GITHUB}"
        mem.start_task(secret_task, "rotate again")
        assert mem.current_task_id == f"t2-{m('github_token', GITHUB)}"
        mem.record_file_interaction("deploy.sh", "edit")
        mem.record_tool_execution("bash", {"cmd": "true"}, success=True, task_id=secret_task)
        mem.store_snapshot(
            {
                "timestamp": NOW,
                "session_id": "s1",
                "task_id": secret_task,
                "items": [],
                "total_tokens": 0,
                "reason": "r",
            }
        )
        mem.pause_task(secret_task)
        assert mem.current_task_id is None and mem.task(secret_task).status == "paused"
        mem.resume_task(secret_task)
        assert mem.current_task_id == mem.task(secret_task).task_id == f"t2-{m('github_token', GITHUB)}"
        mem.fail_task(secret_task, "gave up")
        record = mem.task(secret_task)
        assert (record.status, record.files_touched, record.tools_used) == ("failed", ["deploy.sh"], {"bash": 1})
        with pytest.raises(TaskStateError, match=r"t2-\[REDACTED:github_token"):
            mem.start_task(secret_task, "once more")
        # A file path holding a secret: likewise.
        secret_path = f"keys/{AWS_KEY}.pem"
        mem.start_task("t3", "fix the key file")
        mem.record_tool_execution("cat", {}, success=False, error_message="denied", file_path=secret_path)
        mem.record_file_interaction(secret_path, "edit")
        mem.record_tool_execution("cat", {}, success=True, file_path=secret_path)  # error, then fix
        stored_path = f"keys/{m('aws_access_key', AWS_KEY)}.pem"
        assert [i.file_path for i in mem.file_history(secret_path)] == [stored_path]
        assert [r.file_path for r in mem.failed_tool_runs(secret_path)] == [stored_path]
        assert [i.file_path for i in mem.last_interactions(AWS_KEY)] == [stored_path]
        assert mem.task("t3").files_touched == [stored_path]
        [run] = mem.failed_tool_runs("deploy.sh")
        assert run.parameters["_pii"] == ["email"]
        assert run.parameters["env"]["AWS_ACCESS_KEY_ID"] == m("aws_access_key", AWS_KEY)
        assert mem.learnings()[0]["data"]["_pii"] == ["phone"]
        assert [p.pattern_type for p in mem.patterns()] == ["error-fix", "error-fix"]
    data = path.read_bytes()
    wal = Path(str(path) + ".wal")
    if wal.exists():
        data += wal.read_bytes()
    for secret in (AWS_KEY, GITHUB, "Sup3rS3cretPw"):
        assert secret.encode() not in data
    assert m("aws_access_key", AWS_KEY).encode() in data  # what is there instead
