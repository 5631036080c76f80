"""A migration run: each user's DeerFlow files written into memsvc, with a report of every item.

- **File entries** go one ``add`` at a time through the same path as the model's
  ``memory`` tool: an event per write, run by a worker through the store, the
  file's lock and the scanner, on thread ``migration``. So a migration beside
  live agents loses neither side's writes, an entry already there is a no-op,
  each item gets its own verdict (added, already there, over the limit,
  blocked), and the event log explains every migrated entry later.
- **Bank documents** (the ``history`` summaries, and entries their file has no
  room for) are scanned and retained by the user's Hindsight provider, after
  the bank said which of them it holds: ids follow the text, so a re-run sends
  nothing. The run waits for each retain, so the report says what Hindsight has.
- **Mirrors of the file entries** are sent by the run itself, not queued by the
  worker (its writes say ``mirror: false``): after each file, every entry it
  placed or found already there is made sure of in its bank, as the mirror's
  own document, so a run after a Hindsight outage fills the banks the first
  run could not, and a run over complete banks sends nothing. With
  ``--skip-hindsight`` nothing at all reaches Hindsight.
- **A dry run** writes the same entries into a scratch copy of each user's files
  with a runtime of its own: its verdicts are the real ones, and nothing is
  written to the data dir, the DeerFlow home or Hindsight.
- A file whose items were all handled is renamed ``memory.json.bak``; a file that
  failed is left for the next run, with a record of the entries it wrote
  (:mod:`memsvc.migration.progress`), and one user's failure never stops the next.
  Redis refusing or not confirming a write would fail every user alike: that stops
  the run, and :attr:`Migration.report` says what was done until then.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import fakeredis
import structlog

from memsvc.builtin import replies
from memsvc.client import SERVICE_ERROR, MemoryClient, misconfigured
from memsvc.errors import (
    MemoryMisconfiguredError,
    MemoryServiceError,
    MemoryUnavailableError,
    MemsvcError,
    MigrationSourceError,
)
from memsvc.events import MEMORY_TOOL
from memsvc.hindsight.banks import MIGRATION_TAG
from memsvc.hindsight.client import HindsightError
from memsvc.hindsight.provider import HindsightProvider
from memsvc.ids import validate_id
from memsvc.migration.deerflow import MEMORY_JSON, Source, read_source
from memsvc.migration.mapping import Item, plan
from memsvc.migration.progress import Progress
from memsvc.paths import MEMORY_FILE, TARGETS, USER_FILE, DataLayout, Target
from memsvc.redisconn import connect
from memsvc.service.runtime import AgentMemory, Runtime
from memsvc.settings import ServiceSettings
from memsvc.store.atomicfile import write_all

log = structlog.get_logger(__name__)

MIGRATION_THREAD = "migration"  # the thread a migration's writes are logged under
ADDED, PRESENT, EARLIER, OVER, BLOCKED, REFUSED, UNCONFIRMED = (
    "added",
    "already there",
    "written before",
    "over the limit",
    "blocked",
    "refused",
    "not confirmed",
)
# writes not confirmed in a row that stop the run: one is a busy file, more are Redis or the
# workers away (every user's writes would wait out the deadline alike)
UNCONFIRMED_IN_A_ROW = 2
RETAINED, HELD, TO_RETAIN, NOT_RETAINED, SKIPPED = (
    "retained",
    "already retained",
    "to retain",
    "not retained",
    "skipped",
)


@dataclass(frozen=True)
class Outcome:
    """What became of one item: where it went (a file, a bank) and the verdict."""

    origin: str
    text: str
    destination: str
    verdict: str
    detail: str = ""


@dataclass(frozen=True)
class Mirrored:
    """A file's migrated entries in their bank: how many, and how many the bank lacked."""

    file: str
    bank: str
    entries: int
    sent: int


@dataclass
class FileReport:
    file: str
    user_id: str
    agent_id: str
    outcomes: list[Outcome] = field(default_factory=list)
    mirrored: list[Mirrored] = field(default_factory=list)
    backup: str | None = None
    left_for_hindsight: bool = False  # --skip-hindsight left out what only a bank takes
    already_migrated: bool = False
    error: str | None = None


@dataclass
class UserReport:
    user_id: str
    files: list[FileReport] = field(default_factory=list)
    error: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None or any(f.error is not None for f in self.files)


@dataclass
class MigrationReport:
    """Every item of every file, by user; ``failed`` when any user did."""

    dry_run: bool
    users: list[UserReport] = field(default_factory=list)
    stopped: str | None = None  # why the run ended before its last user, if it did

    @property
    def failed(self) -> bool:
        return self.stopped is not None or any(user.failed for user in self.users)

    def totals(self) -> dict[str, int]:
        counted = Counter(
            outcome.verdict
            for user in self.users
            for report in user.files
            for outcome in report.outcomes
        )
        return dict(sorted(counted.items()))

    def as_dict(self) -> dict[str, Any]:
        return {
            "dry_run": self.dry_run,
            "stopped": self.stopped,
            "failed_users": [user.user_id for user in self.users if user.failed],
            "totals": self.totals(),
            "users": [{**asdict(user), "failed": user.failed} for user in self.users],
        }

    def lines(self) -> list[str]:
        """For people: per user and file, one line per item, then the totals."""
        out = ["dry run: nothing is written; the verdicts are those of a real run"] * self.dry_run
        for user in self.users:
            out.append(f"{user.user_id}{'  FAILED' if user.failed else ''}")
            if user.error:
                out.append(f"  error: {user.error}")
            for report in user.files:
                out.append(f"  {report.file}  (agent {report.agent_id})")
                if report.already_migrated:
                    out.append("    already migrated: only its .bak is left")
                for o in report.outcomes:
                    detail = f"  ({o.detail})" if o.detail else ""
                    what = _short(o.text) if o.text else o.origin  # a skipped item has no text
                    out.append(f"    {o.verdict:<16} {o.destination:<28} {what}{detail}")
                for m in report.mirrored:
                    out.append(
                        f"    in {m.bank}: the {m.entries} migrated entries of {m.file} "
                        f"({m.sent} sent, {m.entries - m.sent} there already)"
                    )
                if report.error:
                    out.append(f"    error: {report.error}")
                if report.backup:
                    out.append(f"    kept as {report.backup}")
                if report.left_for_hindsight:
                    out.append(
                        "    left in place: a run without --skip-hindsight retains what only "
                        "Hindsight takes, then keeps it as memory.json.bak"
                    )
        failed = sum(user.failed for user in self.users)
        totals = ", ".join(f"{count} {verdict}" for verdict, count in self.totals().items())
        out.append(f"{len(self.users)} users, {failed} failed" + (f"; {totals}" if totals else ""))
        if self.stopped is not None:
            out.append(f"stopped before the other users: {self.stopped}")
        return out


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


class EntryWriter(Protocol):
    """Where a migration's file entries are written: the service, or a dry run's scratch copy."""

    async def add(
        self, user_id: str, agent_id: str, target: Target, content: str, *, mirror: bool
    ) -> dict[str, Any]:
        """One ``memory`` tool add; returns the tool's result. ``mirror=False``: no external
        provider hears of it."""

    async def entries(self, user_id: str, agent_id: str) -> dict[Target, set[str] | None]:
        """The entries the user's two files hold now (blocked ones left out); ``None`` for a
        file that does not exist."""


class ToolWriter:
    """Through the service, as the model's own ``memory`` calls are."""

    def __init__(self, client: MemoryClient) -> None:
        self._client = client

    async def add(
        self, user_id: str, agent_id: str, target: Target, content: str, *, mirror: bool
    ) -> dict[str, Any]:
        args = {"action": "add", "target": target, "content": content}
        return await self._client.call_tool(
            user_id, agent_id, MIGRATION_THREAD, MEMORY_TOOL, args, mirror=mirror
        )

    async def entries(self, user_id: str, agent_id: str) -> dict[Target, set[str] | None]:
        return _held(await self._client.get_memory(user_id, agent_id))


class ScratchWriter:
    """A dry run's writes: the same tool, on a copy of the user's files taken at first use;
    never mirrored."""

    def __init__(self, runtime: Runtime, live: DataLayout) -> None:
        self._runtime = runtime
        self._live = live
        self._copied: set[str] = set()
        overrides = live.global_overrides()
        if overrides.is_file():
            shutil.copy2(overrides, runtime.layout.global_overrides())

    async def add(
        self, user_id: str, agent_id: str, target: Target, content: str, *, mirror: bool
    ) -> dict[str, Any]:
        memory = await self._copy(user_id, agent_id)
        args = {"action": "add", "target": target, "content": content}
        return (await memory.manager.memory_write(args, thread_id=MIGRATION_THREAD)).result

    async def entries(self, user_id: str, agent_id: str) -> dict[Target, set[str] | None]:
        memory = await self._copy(user_id, agent_id)
        return _held(await memory.manager.builtin.view())

    async def _copy(self, user_id: str, agent_id: str) -> AgentMemory:
        if user_id not in self._copied:
            self._copied.add(user_id)
            live = self._live.user_dir(user_id)
            if live.is_dir():
                shutil.copytree(live, self._runtime.layout.user_dir(user_id), symlinks=True)
        return await self._runtime.memory(user_id, agent_id)


def _held(view: dict[str, Any]) -> dict[Target, set[str] | None]:
    """The entries of a view of the files (:meth:`MemoryClient.get_memory`), by target;
    ``None`` for a file that does not exist."""
    held: dict[Target, set[str] | None] = {}
    for target in TARGETS:
        entries = view[f"{target}_md"]
        absent = view["last_modified"][target] is None and not entries
        held[target] = None if absent else {e["content"] for e in entries if not e["blocked"]}
    return held


def _verdict(result: dict[str, Any]) -> tuple[str, str]:
    """The tool's result as a verdict. A write Redis refused or did not take stops the run
    (every user's would fail alike); the store failing fails the file."""
    if result.get("success"):
        return (PRESENT if result.get("message") == replies.DUPLICATE else ADDED), ""
    error = str(result.get("error") or "refused")
    if misconfigured(result):  # Redis refuses the service, not this entry: the run stops
        raise MemoryMisconfiguredError("a write was refused (the log says why)")
    if result.get("pending"):  # taken, maybe applied later: this file waits for a later run
        return UNCONFIRMED, "it may still be applied; a later run sees whether it was"
    if result.get("retryable"):  # every user's would fail alike
        raise MemoryUnavailableError("a write was not taken: Redis or the workers are away")
    if error.startswith(SERVICE_ERROR):  # the store failed, not the entry: the file fails
        raise MemoryServiceError(error.splitlines()[0])
    if error.startswith("Blocked"):
        return BLOCKED, error
    if "usage" in result and "current_entries" in result:
        return OVER, f"the file holds {result['usage']} chars"
    if result.get("done"):  # the turn's cap on failed consolidations replaced the usage
        return OVER, "the file is full"
    return REFUSED, error


def _file_name(target: Target, agent_id: str) -> str:
    return USER_FILE if target == "user" else f"agents/{agent_id}/{MEMORY_FILE}"


class Migration:
    """Runs the files of each user in turn; see the module docstring."""

    def __init__(
        self,
        writer: EntryWriter,
        runtime: Runtime,
        *,
        dry_run: bool = False,
        skip_hindsight: bool = False,
    ) -> None:
        """``runtime`` names the banks and holds the Hindsight providers (never its writes)."""
        self._writer = writer
        self._runtime = runtime
        self._dry_run = dry_run
        self._skip_hindsight = skip_hindsight
        self._unconfirmed = 0  # writes in a row the service did not confirm in time
        self.report = MigrationReport(dry_run=dry_run)

    async def run(
        self,
        sources: dict[str, list[Source]],
        *,
        progress: Callable[[UserReport], object] | None = None,
    ) -> MigrationReport:
        """Every user's files in turn; :attr:`report` holds what was done so far, also when
        the run stops early (interrupted, or Redis or the workers away: those raise, since
        every user would fail alike)."""
        self.report = MigrationReport(dry_run=self._dry_run)
        self._unconfirmed = 0
        for user_id, files in sources.items():
            user = UserReport(user_id)
            self.report.users.append(user)  # listed, and filled as it goes
            try:
                await self._user(user, files)
            except BaseException as exc:
                interrupted = isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
                self.report.stopped = "interrupted" if interrupted else str(exc)
                raise
            if progress is not None:
                progress(user)
        return self.report

    async def _user(self, report: UserReport, sources: list[Source]) -> None:
        """One user's files; what fails the user is recorded in the report, not raised."""
        if not sources:
            report.error = "no memory.json of this user in the DeerFlow home"
        for source in sources:
            # filled as the file goes: a file that fails partway still lists what it wrote
            file = FileReport(source.relative, source.user_id, source.agent_id)
            report.files.append(file)
            try:
                await self._file(source, file)
            except (MemoryUnavailableError, MemoryMisconfiguredError) as exc:
                file.error = str(exc)
                raise
            except (MemsvcError, OSError) as exc:
                file.error = f"Hindsight: {exc}" if isinstance(exc, HindsightError) else str(exc)
                log.warning("migration_file_failed", file=source.relative, error=file.error)

    async def _file(self, source: Source, report: FileReport) -> None:
        if source.done:
            report.already_migrated = True
            return
        validate_id("user_id", source.user_id)
        validate_id("agent_id", source.agent_id)
        try:
            read = read_source(source)
        except MigrationSourceError:
            if _moved_by_another_run(source):
                report.already_migrated = True
                return
            raise
        planned = plan(source, read)
        report.outcomes += [Outcome(o, "", "-", SKIPPED, why) for o, why in planned.skipped]
        progress = Progress.of(source)
        held: dict[Target, set[str] | None] = dict.fromkeys(TARGETS)
        if progress.written:
            # entries an earlier run wrote to a file that is not there (a data dir set up
            # anew, another deployment) were not removed by anyone: they are written again
            held = await self._writer.entries(source.user_id, source.agent_id)
            progress.written = {(t, text) for t, text in progress.written if held[t] is not None}
        to_banks: list[Item] = []
        placed: list[Item] = []  # in their file now: their mirrors are this run's to send
        for item in planned.items:
            if not item.in_file:
                to_banks.append(item)
                continue
            destination = _file_name(item.target, source.agent_id)
            if (item.target, item.text) in progress.written:
                why = "by an earlier run of this file; not written again"
                report.outcomes.append(Outcome(item.origin, item.text, destination, EARLIER, why))
                # not mirrored yet: only if its file still holds it (an agent may have
                # replaced or removed it, and its own write mirrored that)
                if not progress.mirrored and item.text in (held[item.target] or ()):
                    placed.append(item)
                continue
            result = await self._writer.add(
                source.user_id,
                source.agent_id,
                item.target,
                item.text,
                mirror=False,  # sent below, and waited for (or, --skip-hindsight, never)
            )
            verdict, detail = _verdict(result)
            self._unconfirmed = self._unconfirmed + 1 if verdict == UNCONFIRMED else 0
            if self._unconfirmed >= UNCONFIRMED_IN_A_ROW:
                raise MemoryUnavailableError(
                    f"{self._unconfirmed} writes in a row were not confirmed in time: Redis or "
                    "the workers are away (they may still be applied; a later run sees them)"
                )
            detail = "; ".join(part for part in (item.note, detail) if part)
            report.outcomes.append(Outcome(item.origin, item.text, destination, verdict, detail))
            if verdict in (OVER, REFUSED):  # not in the file: the bank still gets it
                to_banks.append(item)
            elif verdict in (ADDED, PRESENT):
                placed.append(item)
                if not self._dry_run:  # kept as it goes: a run killed now leaves it said
                    progress.written.add((item.target, item.text))
                    progress.mirrored = False
                    progress.save()
        if unsure := sum(o.verdict == UNCONFIRMED for o in report.outcomes):
            raise MemoryServiceError(
                f"{unsure} {'write was' if unsure == 1 else 'writes were'} not confirmed in "
                "time (a busy file, or a slow Redis): the file is left for a later run, which "
                "sees what was applied"
            )
        for_hindsight = await self._banks(source, to_banks, report)
        if await self._mirror(source, placed, report) and not self._dry_run:
            progress.mirrored = True
            progress.save()
        if for_hindsight and not self._dry_run:  # the file stays for a run that sends it
            report.left_for_hindsight = True
        elif not self._dry_run:
            try:
                report.backup = _back_up(source, read.raw)
            except FileNotFoundError:
                if not _moved_by_another_run(source):
                    raise
                report.already_migrated = True
            progress.drop()
        log.info("migration_file_done", file=source.relative, items=len(report.outcomes))

    async def _mirror(self, source: Source, placed: list[Item], report: FileReport) -> bool:
        """Make sure each file entry of ``placed`` is in its bank (see the module docstring);
        whether they are (not for a user without Hindsight: enabled later, it gets them)."""
        if self._dry_run or self._skip_hindsight:
            return False
        memory = await self._runtime.memory(source.user_id, source.agent_id)
        provider = memory.manager.external
        if not isinstance(provider, HindsightProvider):
            return False
        for target in TARGETS:
            entries = list(dict.fromkeys(item.text for item in placed if item.target == target))
            if not entries:
                continue
            # the bank a worker's mirror of these writes would have filled: their thread's
            sent = await provider.mirror_entries(target, entries, thread_id=MIGRATION_THREAD)
            report.mirrored.append(
                Mirrored(
                    file=_file_name(target, source.agent_id),
                    bank=provider.bank_for(target, MIGRATION_THREAD),
                    entries=len(entries),
                    sent=len(sent),
                )
            )
        return True

    async def _banks(self, source: Source, items: list[Item], report: FileReport) -> bool:
        """Retain ``items`` in their banks; whether the user has Hindsight and this run left
        it out (``--skip-hindsight``): then the items wait for a run without the flag."""
        memory = await self._runtime.memory(source.user_id, source.agent_id)
        provider = memory.manager.external
        if not isinstance(provider, HindsightProvider) or self._skip_hindsight:
            hindsight = isinstance(provider, HindsightProvider)
            why = "--skip-hindsight" if hindsight else "Hindsight is off for this user"
            report.outcomes += [
                Outcome(item.origin, item.text, "Hindsight", NOT_RETAINED, why) for item in items
            ]
            return hindsight and bool(items)
        if not items:
            return False
        for target in TARGETS:
            bank = provider.bank_for(target)
            clean = []
            for item in (item for item in items if item.target == target):
                if problem := provider.refusal(item.text) or _field_refusal(provider, item):
                    report.outcomes.append(Outcome(item.origin, item.text, bank, BLOCKED, problem))
                else:
                    clean.append(item)
            if not clean:
                continue
            sent: set[str] = set()
            if not self._dry_run:
                formerly = {
                    item.document.document_id or "": item.former_id
                    for item in clean
                    if item.former_id is not None
                }
                sent = await provider.retain_once(
                    target, [item.document for item in clean], tag=MIGRATION_TAG, formerly=formerly
                )
            for item in clean:
                verdict = TO_RETAIN if self._dry_run else RETAINED
                if not self._dry_run and item.document.document_id not in sent:
                    verdict = HELD
                report.outcomes.append(Outcome(item.origin, item.text, bank, verdict, item.note))
        return False


def _field_refusal(provider: HindsightProvider, item: Item) -> str | None:
    """Why the scanner keeps a field a document carries beside its text out of a bank (a
    fact's id, category or thread, as the file had them), if it does."""
    document = item.document
    for name, value in (("context", document.context or ""), *(document.metadata or {}).items()):
        if problem := provider.refusal(value):
            return f"its {name}: {problem}"
    return None


def _moved_by_another_run(source: Source) -> bool:
    """Whether the file went since this run found it, and a backup is there: a run beside
    this one (on the same home) kept it as done."""
    return not source.path.exists() and source.backup.exists()


def _back_up(source: Source, read: bytes) -> str:
    """``memory.json`` -> ``memory.json.bak``, only as it was read: DeerFlow may have
    written it meanwhile (it may still be running), and what it added was not migrated.
    Such a file is put back (unless DeerFlow wrote another since) and fails, to be
    migrated by the next run.

    An older backup is never replaced: beside one, the file goes to a name of its own
    (dropped again when the two are the same bytes), and a crash at any step leaves
    ``memory.json`` or a ``memory.json.bak`` for the next run to find.
    """
    backup = source.backup
    if backup.exists():
        backup = source.path.with_name(f"{MEMORY_JSON}.{time.time_ns()}.bak")
    os.replace(source.path, backup)
    if backup.read_bytes() != read:
        _put_back(backup, source.path)
        raise MigrationSourceError(
            f"{source.relative} changed while it was migrated (is DeerFlow still writing it?): "
            "left for the next run"
        )
    if backup != source.backup and _holds(source.backup, read):
        backup.unlink()  # the older backup holds the same bytes
        backup = source.backup
    return str(Path(source.relative).with_name(backup.name))


def _holds(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a regular file of exactly ``data``; never opens anything else
    (a FIFO found there held the whole run, a folder failed a file already moved)."""
    try:
        info = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return os.read(fd, len(data) + 1) == data
    finally:
        os.close(fd)


def _put_back(moved: Path, path: Path) -> None:
    """``moved`` back at ``path``, unless DeerFlow wrote a newer file there since (then
    ``moved`` stays a backup). Never over a file: a hard link, or where the file system
    has none (vfat, some network mounts) a new file created exclusively."""
    try:
        os.link(moved, path)
    except FileExistsError:
        return
    except OSError:
        try:
            _create_exclusively(path, moved.read_bytes())
        except FileExistsError:
            return
    moved.unlink()


def _create_exclusively(path: Path, data: bytes) -> None:
    """``path`` with ``data``, refused if it exists; none left half written on a failure."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    try:
        write_all(fd, data)
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)


@contextlib.asynccontextmanager
async def open_migration(
    settings: ServiceSettings, *, dry_run: bool = False, skip_hindsight: bool = False
) -> AsyncIterator[Migration]:
    """A migration against the service ``settings`` name: its Redis and workers, or an
    embedded worker; for a dry run, a scratch data dir that is removed afterwards."""
    if dry_run:
        with tempfile.TemporaryDirectory(prefix="memsvc-dry-run-") as scratch:
            redis = fakeredis.aioredis.FakeRedis()
            runtime = Runtime(
                settings.model_copy(update={"data_dir": Path(scratch)}), redis, shared_redis=False
            )
            try:
                writer = ScratchWriter(runtime, DataLayout.at(settings.data_dir))
                yield Migration(writer, runtime, dry_run=True, skip_hindsight=skip_hindsight)
            finally:
                await runtime.aclose()
                await redis.aclose()
        return
    async with MemoryClient(settings=settings) as client:
        if client.embedded is not None:
            yield Migration(
                ToolWriter(client), client.embedded.runtime, skip_hindsight=skip_hindsight
            )
            return
        assert settings.redis_url is not None
        shared = connect(settings.redis_url, settings)
        runtime = Runtime(settings, shared)
        try:
            yield Migration(ToolWriter(client), runtime, skip_hindsight=skip_hindsight)
        finally:
            await runtime.aclose()
            await shared.aclose()
