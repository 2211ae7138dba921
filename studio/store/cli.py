"""``studio audit ...``: verify the event log's hash chain and the installed code's digest."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib.metadata
import importlib.util
import marshal
import re
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy as sa
import typer

import studio
from studio.code_digest import code_digest, product_roots
from studio.config.loader import default_database_hint, load_config
from studio.errors import StoreError, StudioError
from studio.store.accounts import AccountsReport, check_accounts
from studio.store.checkpoints import CheckpointReport, check_checkpoints, checkpoints
from studio.store.database import Database, async_url, safe_url, sqlite_file
from studio.store.eventlog import ChainReport, EventLog, admin_events, events, parse_head
from studio.store.game_commands import (
    CommandIndexReport,
    check_commands,
    game_commands,
    game_commands_through,
)
from studio.store.rounds import (
    IndexRepair,
    IndexReport,
    apply_repair,
    check_index,
    plan_repair,
    rounds,
)

# The lock a controller holds on its database (studio/controller/process.py): one at a time.
CONTROLLER_LOCK = "studio controller"

# Disagreements printed by ``studio audit verify``; the count of rounds says how many in all.
SHOWN_PROBLEMS = 20

audit_app = typer.Typer(help="Audit: event-log chain and code integrity.", no_args_is_help=True)


# The tables `studio audit verify` reads: the two chains, the round index, the command index.
AUDITED_TABLES = (
    events.name,
    admin_events.name,
    rounds.name,
    game_commands.name,
    game_commands_through.name,
)


@asynccontextmanager
async def audited_database(url: str, *, read_only: bool = True) -> AsyncIterator[Database]:
    """The studio database at ``url`` as it is: refused, and nothing created in it, when it
    lacks a table the audit reads (opening it as the studio does would create them all, and
    their empty chains would pass). ``read_only``: a SQLite file is opened read-only, the
    file audited left as it was (:class:`Database`)."""
    db = Database(url, read_only=read_only)
    try:
        present = await db.table_names()
        missing = [name for name in AUDITED_TABLES if name not in present]
        if len(missing) == len(AUDITED_TABLES):
            raise StoreError(
                f"database {safe_url(url)} holds no studio audit log "
                f"(no {events.name} table): nothing to verify"
            )
        if missing:
            raise StoreError(
                f"database {safe_url(url)} has no {' or '.join(missing)} table: made by an "
                "older version? `studio controller run` creates what is missing at its start; "
                "not verified"
            )
        yield db
    finally:
        await db.close()


async def verify_chain(url: str, expect: tuple[int, str] | None = None) -> ChainReport:
    async with audited_database(url) as db:
        return await EventLog(db).verify(expect)


@dataclass(frozen=True)
class Audit:
    """What ``studio audit verify`` found."""

    chain: ChainReport
    admin: ChainReport
    index: IndexReport
    commands: CommandIndexReport
    # Records of the event log whose payload is not a JSON object: (id, what), by id. The
    # index checks leave them out.
    bad_payloads: list[tuple[int, str]]
    # The console accounts against the admin log (None: the database has no users table).
    accounts: AccountsReport | None = None
    admin_bad_payloads: list[tuple[int, str]] = field(default_factory=list)
    # Each table's checkpoint against its record (None: no checkpoints table).
    checkpoints: CheckpointReport | None = None


# Seconds of silence after which a long audit says how far it is (on the error stream).
PROGRESS_SECONDS = 2.0


class Progress:
    """Lines on the error stream while a long audit runs: at most one per
    :data:`PROGRESS_SECONDS`, none for an audit shorter than that (300,000 records took
    10 s in silence)."""

    def __init__(self) -> None:
        self.last = time.monotonic()
        self.step = ""
        self.of = 0
        self.unit = "record"

    def start(self, step: str, of: int = 0, unit: str = "record") -> None:
        self.step, self.of, self.unit = step, of, unit

    def at(self, number: int) -> None:
        now = time.monotonic()
        if now - self.last < PROGRESS_SECONDS:
            return
        self.last = now
        of = f" of {self.of:,}" if self.of else ""
        typer.echo(f"audit: {self.step}: {self.unit} {number:,}{of}", err=True)


async def _last_id(db: Database, table: sa.Table) -> int:
    """The chain's last id, for the progress lines (on SQLite, the last that is a number:
    it keeps text in any column, which the walk names)."""
    query = sa.select(sa.func.max(table.c.id))
    if db.is_sqlite:
        query = query.where(sa.func.typeof(table.c.id) == "integer")
    async with db.engine.connect() as conn:
        return int((await conn.execute(query)).scalar() or 0)


async def verify_chains(
    url: str,
    expect: tuple[int, str] | None,
    expect_admin: tuple[int, str] | None,
    checkpoint_key: bytes | None = None,
) -> Audit:
    """The event log's chain, the admin log's (user administration), and the round index
    and the game commands' index (not chained) against the event log."""
    progress = Progress()
    async with audited_database(url) as db:
        bad: dict[int, str] = {}
        log = EventLog(db, bad_payloads=bad)
        admin = EventLog(db, admin_events)
        log.progress = admin.progress = progress.at
        last = await _last_id(db, events)
        progress.start("event log chain", last)
        chain = await log.verify(expect)
        progress.start("admin log chain", await _last_id(db, admin_events))
        admin_report = await admin.verify(expect_admin)
        progress.start("round index against the event log", last)
        index = await check_index(db, log)
        progress.start("command index against the event log", last)
        commands = await check_commands(db, log)
        accounts = checkpoint_report = None
        admin_bad: dict[int, str] = {}
        present = await db.table_names()
        if checkpoints.name in present:
            progress.start("checkpoints against their records")
            checkpoint_report = await check_checkpoints(db, log, checkpoint_key)
        if "users" in present:
            progress.start("accounts against the admin log")
            accounts = await check_accounts(db, EventLog(db, admin_events, bad_payloads=admin_bad))
        return Audit(
            chain,
            admin_report,
            index,
            commands,
            sorted(bad.items()),
            accounts,
            sorted(admin_bad.items()),
            checkpoint_report,
        )


def foreign_bytecode(roots: list[Path] | None = None) -> list[Path]:
    """Cached bytecode (``__pycache__/*.pyc``) of the product that Python would run
    instead of its source but that is not the source compiled (see :func:`foreign_caches`)."""
    roots = product_roots() if roots is None else roots
    return foreign_caches(source for root in roots for source in sorted(root.rglob("*.py")))


def foreign_caches(sources: Iterable[Path]) -> list[Path]:
    """The cached bytecode of these sources that Python would run instead of them but that
    is not the source compiled.

    The interpreter takes a timestamp ``.pyc`` whose recorded source time and size match
    the source's, and an unchecked hash-based one always, without reading the source: a
    ``.pyc`` rewritten with its header kept runs other code while the sources, and so
    the digests, are unchanged (pip lists no hash for the ``.pyc`` it writes). Each one
    this interpreter would use is compared with its source compiled again (deterministic
    for one Python version and path).
    """
    found = []
    for source in sources:
        for optimize, tag in ((-1, ""), (1, 1), (2, 2)):
            cached = Path(importlib.util.cache_from_source(str(source), optimization=tag))
            if cached.is_file() and not _is_source_compiled(source, cached, optimize):
                found.append(cached)
    return found


def _is_source_compiled(source: Path, cached: Path, optimize: int) -> bool:
    data = cached.read_bytes()
    if data[:4] != importlib.util.MAGIC_NUMBER:
        return True  # another Python's: this one ignores it
    flags = int.from_bytes(data[4:8], "little")
    body = source.read_bytes()
    if flags == 0:
        stat = source.stat()
        recorded = (int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little"))
        if recorded != (int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF):
            return True  # stale: the interpreter compiles the source instead
    elif flags & 0b10 and data[8:16] != importlib.util.source_hash(body):
        return True  # checked hash-based, stale: likewise
    try:
        code = marshal.loads(data[16:])
        again = compile(body, code.co_filename, "exec", dont_inherit=True, optimize=optimize)
    except (ValueError, EOFError, TypeError, AttributeError, SyntaxError):
        return False
    # Compared as marshal version 2 writes them: every field, without the back-references
    # of version 3+, which follow reference counts at the time of writing (pip's
    # compileall wrote pycparser's c_parser.pyc with other ones than a compile here).
    return marshal.dumps(again, 2) == marshal.dumps(code, 2)


# Files a distribution's RECORD lists that describe this install rather than the
# distribution: where it came from, which tool installed it, whether it was asked for, the
# list itself and its signatures. They differ between two installs of the same wheel.
_INSTALL_NOTES = frozenset(
    ("RECORD", "RECORD.jws", "RECORD.p7s", "INSTALLER", "REQUESTED", "direct_url.json")
)


@dataclass(frozen=True)
class DistributionDigest:
    """One runtime dependency as installed: ``digest`` is the SHA-256 over each digested
    file's path (relative to site-packages) and SHA-256, in path order."""

    name: str  # normalized (PEP 503): lower case, runs of -_. as one -
    version: str
    digest: str
    files: int
    mismatched: tuple[str, ...]  # listed files whose bytes are not what RECORD says

    @property
    def line(self) -> str:
        return f"{self.name} {self.version} {self.digest}"


def runtime_distributions(
    path: list[str] | None = None, root: str = "studio"
) -> list[importlib.metadata.Distribution]:
    """The distributions the installed program runs on: what ``root`` requires without
    extras (not ``dev``), then what those require, with the extras asked for
    (``uvicorn[standard]`` brings uvicorn's ``standard`` requirements), as the environment
    markers select them for this interpreter and platform. Searched for in ``path``
    (``sys.path`` by default), first found first, as imports are. Sorted by name.
    """
    try:
        from packaging.requirements import InvalidRequirement, Requirement
        from packaging.utils import canonicalize_name
    except ImportError as exc:
        raise StoreError("the dependency digest needs the 'packaging' distribution") from exc

    def find(name: str, wanted_by: str | None) -> importlib.metadata.Distribution:
        context = {"name": name} if path is None else {"name": name, "path": path}
        found = next(iter(importlib.metadata.Distribution.discover(**context)), None)
        if found is None:
            by = f" (required by {wanted_by})" if wanted_by else ""
            raise StoreError(f"{name}{by} is not installed")
        return found

    def required(dist: importlib.metadata.Distribution, extras: set[str]) -> list[Requirement]:
        wanted = []
        for text in dist.requires or []:
            try:
                requirement = Requirement(text)
            except InvalidRequirement as exc:
                raise StoreError(f"{dist.name}: cannot read requirement {text!r}") from exc
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": extra}) for extra in extras):
                wanted.append(requirement)
        return wanted

    top = find(root, None)
    found: dict[str, importlib.metadata.Distribution] = {}
    extras_of: dict[str, set[str]] = {}
    pending = [(requirement, root) for requirement in required(top, {""})]
    while pending:
        requirement, wanted_by = pending.pop()
        name = canonicalize_name(requirement.name)
        extras = {"", *requirement.extras}
        if extras <= extras_of.get(name, set()):
            continue  # seen with these extras already (and dependency cycles end here)
        extras_of.setdefault(name, set()).update(extras)
        if name not in found:
            found[name] = find(requirement.name, wanted_by)
        pending.extend((r, name) for r in required(found[name], extras))
    found.pop(canonicalize_name(root), None)  # a cycle back to the program: its own digest
    return [found[name] for name in sorted(found)]


def distribution_digest(dist: importlib.metadata.Distribution) -> DistributionDigest:
    """Hash every file the distribution's RECORD lists, inside site-packages, except
    bytecode (pip writes it at install time, listed without a hash: :func:`foreign_caches`
    checks it) and the installer's notes; check each against RECORD's hash."""
    name = re.sub(r"[-_.]+", "-", dist.name or "").lower()  # PEP 503, as packaging does
    if not name or dist.read_text("RECORD") is None or dist.files is None:
        raise StoreError(f"{name or dist}: installed without a RECORD, its files cannot be checked")
    digest = hashlib.sha256()
    mismatched: list[str] = []
    count = 0
    for entry in sorted(dist.files, key=lambda entry: entry.as_posix()):
        relative = entry.as_posix()
        if (
            not _in_site(entry)  # console scripts: they name this venv's interpreter
            or entry.suffix == ".pyc"
            or (entry.parent.name.endswith(".dist-info") and entry.name in _INSTALL_NOTES)
        ):
            continue
        located = Path(str(entry.locate()))
        try:
            with located.open("rb") as file:
                sha256 = hashlib.file_digest(file, "sha256").digest()
                recorded = entry.hash
                if recorded is not None and recorded.mode != "sha256":
                    file.seek(0)
                    actual = hashlib.file_digest(file, recorded.mode).digest()
                else:
                    actual = sha256
        except FileNotFoundError:
            mismatched.append(f"{relative} (missing)")
            digest.update(f"{relative}\0\n".encode())
            count += 1
            continue
        except (OSError, ValueError) as exc:
            raise StoreError(f"{name}: cannot hash {located}: {exc}") from exc
        if recorded is not None and _record_hash(actual) != recorded.value:
            mismatched.append(relative)
        digest.update(f"{relative}\0{sha256.hex()}\n".encode())
        count += 1
    return DistributionDigest(name, dist.version, digest.hexdigest(), count, tuple(mismatched))


def _in_site(entry: importlib.metadata.PackagePath) -> bool:
    return not entry.is_absolute() and ".." not in entry.parts


def _record_hash(raw: bytes) -> str:
    # RECORD's spelling of a hash (the wheel spec): URL-safe base64 without padding.
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def dependencies_digest(digests: Iterable[DistributionDigest]) -> str:
    """SHA-256 of the lines ``studio audit digest --list`` prints, each with its newline:
    a person can recompute it from that list."""
    return hashlib.sha256("".join(d.line + "\n" for d in digests).encode()).hexdigest()


def dependency_sources(dists: Iterable[importlib.metadata.Distribution]) -> list[Path]:
    """The Python sources the distributions' RECORDs list inside site-packages."""
    return [
        Path(str(entry.locate()))
        for dist in dists
        for entry in dist.files or []
        if entry.suffix == ".py" and _in_site(entry)
    ]


@audit_app.command("verify")
def verify(
    config: Path | None = typer.Option(None, "--config", "-c", help="configuration file"),
    database: str | None = typer.Option(None, "--database", help="database URL (overrides config)"),
    expect_head: str | None = typer.Option(
        None,
        "--expect-head",
        metavar="ID:HASH",
        help="a head printed by an earlier run, kept off this machine: the log must still hold it",
    ),
    expect_admin_head: str | None = typer.Option(
        None,
        "--expect-admin-head",
        metavar="ID:HASH",
        help="the same for the admin log (changes to console accounts)",
    ),
    anchor_file: Path | None = typer.Option(
        None,
        "--anchor-file",
        help="heads kept by earlier runs (on storage the database's writers cannot reach): "
        "checked as --expect-head/--expect-admin-head, then replaced by this run's if all is OK",
    ),
) -> None:
    """Walk the whole event log and admin log and check every record's hash and link;
    check each round of the round index (the history shown) and each game command of the
    command index (commands sent again are answered from it) against the event log."""
    try:
        expect = parse_head(expect_head) if expect_head is not None else None
        expect_admin = parse_head(expect_admin_head) if expect_admin_head is not None else None
        if anchor_file is not None:
            if expect is not None or expect_admin is not None:
                raise StoreError("--anchor-file holds the expected heads: not with --expect-*")
            if not anchor_file.parent.is_dir():
                # Not made here: the folder is storage the database's writers cannot reach
                # (a share); made on the local disk, the heads would be kept beside the log.
                raise StoreError(
                    f"--anchor-file: no folder {anchor_file.parent} (is the storage that keeps "
                    "the heads mounted?): nothing verified"
                )
            expect, expect_admin = read_anchors(anchor_file)
        url, key = audit_target(config, database)
        require_database(url, default_database_hint(config, database))
        audit = asyncio.run(verify_chains(url, expect, expect_admin, key))
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if anchor_file is not None and expect is None:
        # Said, not taken silently: a file lost or renamed must not pass unseen.
        typer.echo(
            f"notice: no anchor file {anchor_file}: taken for a first run, no earlier "
            "heads compared; it is created with this run's heads if all is OK",
            err=True,
        )
    reports, index, commands = (audit.chain, audit.admin), audit.index, audit.commands
    broken = False
    for name, report in zip(("chain", "admin log"), reports, strict=True):
        if report.ok:
            # What to record elsewhere: a later run given it proves no record was cut off the end.
            typer.echo(f"{name} OK: {report.records} records, head {report.anchor}")
            continue
        broken = True
        typer.echo(
            f"{name} BROKEN at record {report.first_bad_id}: {report.reason} "
            f"({report.records} records verified before it)",
            err=True,
        )
    if audit.bad_payloads:
        broken = True
        typer.echo(
            f"event log: {len(audit.bad_payloads)} records whose payload is not a JSON object "
            "or that are damaged (left out of the index checks below)",
            err=True,
        )
        _list_problems("record", audit.bad_payloads)
    if index.ok:
        typer.echo(f"round index OK: {index.rounds} rounds agree with the event log")
    else:
        broken = True
        wrong = len({round_id for round_id, _ in index.problems})
        typer.echo(
            f"round index: {wrong} of {index.rounds} rounds disagree with the event log", err=True
        )
        _list_problems("round", index.problems)
        if any(what.startswith(("alerts ", "players [],")) for _, what in index.problems):
            # What versions before 2026-12-05 wrote (alerts counted again at each start, a
            # round cancelled while betting without players): the log has the truth.
            typer.echo(
                "  (a version before 2026-12-05 wrote alerts counted twice and rounds cancelled "
                "while betting without players; `studio audit repair-index` sets alerts and "
                "players from the event log: look into any row you cannot explain so first)",
                err=True,
            )
    broken = not _commands_agree(commands) or broken
    broken = not _accounts_agree(audit) or broken
    broken = not _checkpoints_agree(audit.checkpoints) or broken
    # Said, as --config, STUDIO_CONFIG, STUDIO_DATABASE__URL and a relative path each
    # choose it: a pass of another database than meant looks the same.
    typer.echo(f"database checked: {database_checked(url)}", err=broken)
    if broken:
        raise typer.Exit(1)
    if anchor_file is not None:
        try:
            write_anchors(anchor_file, reports[0].anchor, reports[1].anchor)
        except OSError as exc:
            typer.echo(f"error: cannot write {anchor_file}: {exc.strerror or exc}", err=True)
            raise typer.Exit(2) from exc


def _list_problems(noun: str, problems: Sequence[tuple[object, str]]) -> None:
    """The first SHOWN_PROBLEMS of a check's problems, one line each, on stderr."""
    for name, what in problems[:SHOWN_PROBLEMS]:
        typer.echo(f"  {noun} {name}: {what}", err=True)


def _checkpoints_agree(report: CheckpointReport | None) -> bool:
    if report is None:
        return True
    for table_id in report.unchecked:
        typer.echo(
            f"notice: checkpoint of {table_id}: sealed with a checkpoint key, not checked "
            "(give --config with the database's checkpoint_key)",
            err=True,
        )
    if report.ok:
        checked = report.checkpoints - len(report.unchecked)
        typer.echo(f"checkpoints OK: {checked} of {report.checkpoints} match their records")
        return True
    typer.echo(
        f"checkpoints: {len(report.problems)} of {report.checkpoints} do not match their "
        "records (a start does not use them: it replays the table's whole log)",
        err=True,
    )
    _list_problems("checkpoint of", report.problems)
    return False


def _accounts_agree(audit: Audit) -> bool:
    report = audit.accounts
    agree = True
    if audit.admin_bad_payloads:
        agree = False
        typer.echo(
            f"admin log: {len(audit.admin_bad_payloads)} records whose payload is not a JSON "
            "object or that are damaged (left out of the accounts' check)",
            err=True,
        )
        _list_problems("record", audit.admin_bad_payloads)
    if report is None:
        return agree
    if report.ok:
        typer.echo(f"accounts OK: {report.accounts} accounts agree with the admin log")
        return agree
    typer.echo(
        f"accounts: {len(report.problems)} disagreements with the admin log "
        f"({report.accounts} accounts)",
        err=True,
    )
    _list_problems("account", report.problems)
    return False


def _commands_agree(report: CommandIndexReport) -> bool:
    pending = (
        f" ({report.pending} answered after the index's last record: taken while this ran, or "
        "by an older version, which the controller's next start indexes)"
        if report.pending
        else ""
    )
    if report.ok:
        typer.echo(
            f"command index OK: {report.commands} commands agree with the event log{pending}"
        )
        return True
    typer.echo(
        f"command index: {len(report.problems)} disagreements with the event log "
        f"({report.commands} commands){pending}",
        err=True,
    )
    _list_problems("command", report.problems)
    return False


def database_url(config: Path | None, database: str | None) -> str:
    """The database to audit: ``--database``, else the configuration's. A ``--config`` that
    is not there is refused with ``--database`` too (it was ignored: a typo went unseen)."""
    return audit_target(config, database)[0]


def audit_target(config: Path | None, database: str | None) -> tuple[str, bytes | None]:
    """The database to audit (:func:`database_url`) and the configured checkpoint key, if
    any: that of ``--config``, also beside ``--database``, else none with ``--database``."""
    if database:
        if config is None:
            return database, None
        if not config.is_file():
            raise StoreError(f"no configuration file {config} (--config): nothing done")
    loaded = load_config(config).database
    key = loaded.checkpoint_key
    return database or loaded.url, key.get_secret_value().encode() if key is not None else None


def require_database(url: str, hint: str = "") -> None:
    """Refuse a SQLite database that is not there: opening it would create it (and its
    directories), and its empty chains would pass the audit."""
    path = sqlite_file(url)
    if path is None:
        if async_url(url).startswith("sqlite"):
            raise StoreError("an in-memory database holds no log: nothing to verify")
        return
    if not path.exists():
        # A relative path is from where the command runs, which the operator may not see.
        where = (
            ""
            if path.is_absolute()
            else f" (the file {path.absolute()}: a relative path is from the current folder)"
        )
        raise StoreError(f"no database at {path}: nothing to verify{where}{hint}")


def database_checked(url: str) -> str:
    """The database a run checked, as its last line says: a SQLite file by its path,
    resolved, beside its URL (password masked)."""
    path = sqlite_file(url)
    return safe_url(url) if path is None else f"{path.resolve()} ({safe_url(url)})"


_ANCHOR_NAMES = ("event_log", "admin_log")


def read_anchors(path: Path) -> tuple[tuple[int, str] | None, tuple[int, str] | None]:
    """The heads an anchor file holds (``event_log ID:HASH`` and ``admin_log ID:HASH`` lines);
    none before its first run (no file yet)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        # The operator's wrong file (a backup, a binary), not a broken chain: an error of
        # usage as the other anchor-file mistakes (it was a traceback, exit 1: "tampered").
        raise StoreError(
            f"{path} is not an anchor file (not UTF-8 text: byte {exc.start}); it holds "
            "'event_log ID:HASH' and 'admin_log ID:HASH' lines"
        ) from exc
    heads: dict[str, tuple[int, str]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        name, _, head = line.strip().partition(" ")
        if not line.strip():
            continue
        if name not in _ANCHOR_NAMES or name in heads:
            raise StoreError(f"{path}:{number}: expected 'event_log ID:HASH' or 'admin_log ...'")
        heads[name] = parse_head(head)
    if set(heads) != set(_ANCHOR_NAMES):
        # A file cut short must not pass for a first run.
        raise StoreError(f"{path}: needs an event_log and an admin_log head")
    return heads["event_log"], heads["admin_log"]


def write_anchors(path: Path, events_head: str, admin_head: str) -> None:
    """Replace the anchor file at once (a crash leaves the old one or the new one)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(f"event_log {events_head}\nadmin_log {admin_head}\n")
    partial.replace(path)


@audit_app.command("repair-index")
def repair_index(
    config: Path | None = typer.Option(None, "--config", "-c", help="configuration file"),
    database: str | None = typer.Option(None, "--database", help="database URL (overrides config)"),
    anchor_file: Path | None = typer.Option(
        None,
        "--anchor-file",
        help="the heads `audit verify --anchor-file` keeps: the log must still hold them "
        "(a tail cut leaves an intact chain); read, never written here",
    ),
) -> None:
    """Set each round's alert codes and players in the round index from the event log, where
    they differ (rows a version before 2026-12-05 counted alerts again at each start, and
    indexed a round cancelled while betting with no players). Refused while a controller
    runs on the database, and unless the event log's and the admin log's chains verify
    (up to the heads of --anchor-file, if given); a round the log has no round event of,
    or no players of, is left as it is."""
    expect: tuple[int, str] | None = None
    expect_admin: tuple[int, str] | None = None

    async def run(url: str) -> tuple[list[str], IndexRepair | None]:
        async with audited_database(url, read_only=False) as db, db.exclusive(CONTROLLER_LOCK):
            log = EventLog(db)
            broken = [
                f"{name} BROKEN at record {report.first_bad_id}: {report.reason}"
                for name, report in (
                    ("chain", await log.verify(expect)),
                    ("admin log", await EventLog(db, admin_events).verify(expect_admin)),
                )
                if not report.ok
            ]
            if broken:
                return broken, None
            bad: dict[int, str] = {}
            plan = await plan_repair(db, EventLog(db, bad_payloads=bad))
            if bad:
                return [f"event log record {i}: {what}" for i, what in sorted(bad.items())], None
            await apply_repair(db, plan)
            return [], plan

    try:
        if anchor_file is not None:
            if not anchor_file.is_file():
                raise StoreError(f"--anchor-file: no file {anchor_file}: nothing repaired")
            expect, expect_admin = read_anchors(anchor_file)
        url = database_url(config, database)
        require_database(url, default_database_hint(config, database))
        broken, plan = asyncio.run(run(url))
    except StudioError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    if plan is None:
        for line in broken:
            typer.echo(line, err=True)
        typer.echo(
            "refused: the index is set from the event log only when its chain and the admin "
            "log's verify and every payload is a JSON object (`studio audit verify`); "
            "nothing was changed",
            err=True,
        )
        raise typer.Exit(1)
    for round_id, before, after in plan.alerts:
        typer.echo(f"round {round_id}: alerts {before} -> {after} (as the log has them)")
    for round_id, before, after in plan.players:
        typer.echo(f"round {round_id}: players {before} -> {after} (as the log has them)")
    for round_id in plan.unlogged:
        typer.echo(
            f"round {round_id}: left as it is: the event log has no round event of it "
            "(records deleted?); the index's row may be the only record of it left",
            err=True,
        )
    for round_id, before in plan.unnamed:
        typer.echo(
            f"round {round_id}: players {before} left as they are: no event of the log names "
            "this round's players (its records from the closing of bets on deleted?)",
            err=True,
        )
    typer.echo(f"round index: {len(plan.repaired)} rounds repaired")
    if plan.unlogged:
        typer.echo(f"round index: {len(plan.unlogged)} rounds not in the event log, left", err=True)


@audit_app.command("digest")
def digest(
    list_all: bool = typer.Option(
        False, "--list", help="also list each runtime dependency: name, version, digest"
    ),
) -> None:
    """Print the SHA-256 digest of the installed control program, and of the runtime
    dependencies it runs on; fail on a dependency's file that is not what its RECORD says
    and on cached bytecode that is not its source compiled."""
    progress = Progress()
    value, count = code_digest()
    typer.echo(f"{value}  ({count} files, studio {studio.__version__})")
    try:
        dists = runtime_distributions()
        progress.start("hashing runtime dependencies", len(dists), "dependency")
        deps = []
        for number, dist in enumerate(dists, start=1):
            deps.append(distribution_digest(dist))
            progress.at(number)
    except StoreError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc
    files = sum(dep.files for dep in deps)
    typer.echo(f"{dependencies_digest(deps)}  ({len(deps)} runtime dependencies, {files} files)")
    if list_all:
        for dep in deps:
            typer.echo(dep.line)
    broken = False
    for dep in deps:
        for relative in dep.mismatched:
            broken = True
            typer.echo(
                f"{dep.name} {dep.version}: {relative} is not what its RECORD says", err=True
            )
    sources = dependency_sources(dists)
    progress.start("comparing cached bytecode with its source", len(sources), "file")

    def ticking(paths: list[Path]) -> Iterator[Path]:
        for number, path in enumerate(paths, start=1):
            progress.at(number)
            yield path

    for path in foreign_bytecode() + foreign_caches(ticking(sources)):
        broken = True
        typer.echo(f"bytecode is not its source compiled (runs instead of it): {path}", err=True)
    if broken:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(audit_app, name="audit")
