"""The ``benchwright`` command."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchwright import __version__
from benchwright.cli import agents_cmd, cache_cmd, doctor_cmd, list_cmd, narrowing_opts, token_cmd
from benchwright.cli.pipes import OutputClosed, exit_quietly, guard_stdout
from benchwright.cli.tables import never_cut
from benchwright.errors import BenchwrightError, InputError, MissingDependency, UserError
from benchwright.server.guard import MAX_BODY_MB
from benchwright.workspace import Workspace

app = typer.Typer(
    name="benchwright",
    help="Evaluate code-generating LLMs and coding agents from YAML.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
cache_app = typer.Typer(help="Inspect and clear the generation cache (.benchwright/cache.sqlite3).",
                        no_args_is_help=True)
app.add_typer(cache_app, name="cache")
cache_app.command("stats")(cache_cmd.stats)
cache_app.command("clear")(cache_cmd.clear)
app.command("doctor")(doctor_cmd.doctor)
app.command("list")(list_cmd.list_plugins)
token_app = typer.Typer(help="Access tokens of 'benchwright serve --auth' (kept hashed in .benchwright/tokens.json).",
                        no_args_is_help=True)
app.add_typer(token_app, name="token")
token_app.command("create")(token_cmd.create)
token_app.command("list")(token_cmd.list_tokens)
token_app.command("revoke")(token_cmd.revoke)
agents_app = typer.Typer(help="Agent CLIs of the presets: install them, list them.", no_args_is_help=True)
app.add_typer(agents_app, name="agents")
agents_app.command("install")(agents_cmd.install)
agents_app.command("list")(agents_cmd.list_agents)

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

WorkspaceOpt = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="Workspace folder (default: nearest with benchwright.yaml)."),
]


def _ws(path: Path | None) -> Workspace:
    return Workspace.open(path)


def _version(value: bool) -> None:
    if value:
        out.print(f"benchwright {__version__}")
        raise typer.Exit()


DEBUG_ENV = "BENCHWRIGHT_DEBUG"
"""Set to 1 for the traceback of an unexpected error (as ``--debug``)."""
_debug = {"on": False}


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="On an unexpected error, print its traceback "
                                        f"(also with {DEBUG_ENV}=1).")] = False,
) -> None:
    """benchwright: every test case, every metric, several models per run."""
    _debug["on"] = debug


@app.command()
def init(
    directory: Annotated[Path, typer.Argument(help="Folder to make the workspace in.")],
    force: Annotated[bool, typer.Option(help="Overwrite existing example files.")] = False,
) -> None:
    """Make a workspace with a working example (tasks, configs, settings)."""
    from benchwright.workspace.workspace import init_workspace

    written = init_workspace(directory, force=force)
    out.print(f"[green]workspace ready[/] in {directory} ({len(written)} files)")
    out.print(f"next: cd {directory} && benchwright run configs/example.yaml")


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Task sources, execution configs and scenarios.")],
    kind: Annotated[str | None, typer.Option(help="task-source, exec-config or scenario (default: detect).")] = None,
    golden: Annotated[bool, typer.Option(help="Also run every golden solution, and mutants of it, through the pipeline.")] = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Check files: every problem at once, with file, line and place. Exit 2 on any error."""
    from benchwright import validation

    if kind not in (None, "task-source", "exec-config", "scenario"):
        raise UserError(f"--kind {kind!r}: use task-source, exec-config or scenario")
    ws = _ws(workspace)
    report = validation.validate(paths, ws, kind)  # type: ignore[arg-type]
    for p in report.problems:
        (err if p.severity == "error" else out).print(p.render(), markup=False, highlight=False)
    if report.errors:
        err.print(f"[red]{len(report.errors)} error(s)[/], {len(report.warnings)} warning(s)")
        raise typer.Exit(2)
    if golden:
        checked = _progress_run(
            "golden solutions", lambda p: validation.check_golden(report.sources, ws, p))
        total, failures = checked.total, checked.failures
        for f in failures:
            err.print(f"broken: {f.task_source} / {f.task} [{f.language}]: {f.message}", markup=False)
        for u in checked.unsupported:
            err.print(f"unsupported: {u.task_source} / {u.task} [{u.language}]: {u.message}",
                      markup=False)
        for s in checked.survivors:
            err.print(f"tests cannot fail: {s.task_source} / {s.task} [{s.language}]: they pass a golden "
                      f"solution changed so that it {' / '.join(s.mutants)}", markup=False)
        if failures:
            err.print(f"[red]{len(failures)} of {total} golden solutions are broken (they fail their own "
                      "tests, do not compile or load, or no test case applies)[/]")
        if checked.survivors:
            err.print(f"[red]{len(checked.survivors)} of {total} tasks have tests that cannot fail (they "
                      "pass a mutant of the golden solution)[/]")
        if checked.unsupported:
            err.print(f"[yellow]{len(checked.unsupported)} of {total} golden solutions need what "
                      "benchwright's sandbox cannot offer (runs report such samples as infra_error, "
                      "never against the model)[/]")
        if failures or checked.survivors:
            raise typer.Exit(2)
        ran = total - len(checked.unsupported)
        out.print(f"golden solutions: {ran}/{ran} pass"
                  + (f" ({len(checked.unsupported)} unsupported here)" if checked.unsupported else "")
                  + f"; {checked.mutants} mutants, each failed by the tests")
    out.print(f"[green]ok[/]: {len(paths)} file(s), {len(report.warnings)} warning(s)")


@app.command()
def schema(kind: Annotated[str, typer.Argument(
        help="task-source, exec-config, scenario, settings or record.")]) -> None:
    """Print the JSON Schema of a file format (for editor completion)."""
    from pydantic import BaseModel

    from benchwright.agents.scenario import Scenario, scenario_schema
    from benchwright.config.model import ExecConfig
    from benchwright.config.settings import Settings
    from benchwright.results.record import Record
    from benchwright.task.model import TaskSource

    models: dict[str, type[BaseModel]] = {"task-source": TaskSource, "exec-config": ExecConfig,
                                          "scenario": Scenario, "settings": Settings, "record": Record}
    if kind not in models:
        raise UserError(f"unknown schema {kind!r}; choose one of {', '.join(models)}")
    shown = scenario_schema() if kind == "scenario" else models[kind].model_json_schema(by_alias=True)
    sys.stdout.write(json.dumps(shown, indent=2) + "\n")


def _progress_run(label: str, fn: Any) -> Any:
    """Call ``fn(progress)``; the bar appears with the first report (after all checks passed)."""
    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=err, transient=False)
    task_id: Any = None

    def progress(done: int, total: int, unit: Any) -> None:
        nonlocal task_id
        if task_id is None:
            bar.start()
            task_id = bar.add_task(label, total=total)
        bar.update(task_id, completed=done, total=total)

    try:
        return fn(progress)
    finally:
        if task_id is not None:
            bar.stop()


class _Phases:
    """One rich progress display with a bar per phase (``golden timings``, then the run); a
    bar appears with its phase's first report."""

    def __init__(self) -> None:
        self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=err, transient=False)
        self.tasks: dict[str, Any] = {}

    def callback(self, label: str) -> Any:
        def progress(done: int, total: int, unit: Any) -> None:
            if label not in self.tasks:
                if not self.tasks:
                    self.bar.start()
                self.tasks[label] = self.bar.add_task(label, total=total)
            self.bar.update(self.tasks[label], completed=done, total=total)

        return progress

    def stop(self) -> None:
        if self.tasks:
            self.bar.stop()


def _show(part: Any) -> None:
    """Print one part of a report; a table wraps its names at any width, never cuts them."""
    from rich.table import Table

    out.print(never_cut(part, out.width) if isinstance(part, Table) else part)


def _warn(message: str) -> None:
    from rich.text import Text

    err.print(Text(f"warning: {message}", style="yellow"), highlight=False)


@app.command()
def run(
    config: Annotated[Path | None, typer.Argument(help="Execution config.")] = None,
    tasks: Annotated[list[str] | None, typer.Option("--tasks", "-t", help="Task source (repeatable).")] = None,
    resume: Annotated[str | None, typer.Option(help="Finish the run RUN_ID where it stopped.")] = None,
    retry_errors: Annotated[bool, typer.Option(help="With --resume: run infra_error samples again.")] = False,
    run_id: Annotated[str | None, typer.Option(help="Name the run (default: config-date-time).")] = None,
    executor: Annotated[str | None, typer.Option(
        help="Where samples run: local (this machine) or ray (a Ray cluster); "
        "default: the settings' executor:, else local.")] = None,
    ray_address: Annotated[str | None, typer.Option(
        help="With --executor ray: auto, ray://HOST:PORT or HOST:PORT (default: the settings' "
        "ray.address; none: start Ray on this machine).")] = None,
    limit: narrowing_opts.LimitOpt = None,
    task: narrowing_opts.TaskOpt = None,
    model: narrowing_opts.ModelOpt = None,
    samples: narrowing_opts.SamplesOpt = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Run a benchmark: every model on every selected task. Exit 1 if a threshold is missed.

    --limit, --task, --model and --samples narrow a run without editing its config (run.yaml
    records them; --resume keeps them)."""
    import signal

    from benchwright.results.report import report_renderables
    from benchwright.results.summary import thresholds_met
    from benchwright.run import engine

    def _terminate(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _terminate)
    ws = _ws(workspace)
    phases = _Phases()
    golden = phases.callback("golden timings")
    if ray_address is not None and (executor or ws.settings.executor) != "ray":
        raise UserError("--ray-address applies to the ray executor: add --executor ray "
                        "(or set executor: ray in benchwright.yaml)")
    where = engine.ExecutorChoice(executor, ray_address)
    narrowing = narrowing_opts.narrowing(limit, task, model, samples, resume)
    if resume:
        try:
            result = engine.resume(ws, resume, phases.callback(f"resume {resume}"), retry_errors,
                                   measuring=golden, warn=_warn, executor=where)
        finally:
            phases.stop()
    else:
        if config is None:
            raise UserError("name an execution config (benchwright run configs/x.yaml) or --resume RUN_ID")

        def warn(prep: engine.Prepared) -> None:
            if prep.sandbox.isolation == "rlimits":
                err.print("[yellow]warning: sandbox 'rlimit' limits resources but isolates nothing "
                          "(no file system or network isolation)[/]")
            if prep.plan.skipped_criteria:
                err.print(f"[yellow]skipping criteria not available here: "
                          f"{', '.join(prep.plan.skipped_criteria)}[/]")
            for problem in prep.plan.warnings:
                err.print(problem.render(), markup=False, highlight=False)
            if prep.narrowing.active:
                err.print(f"narrowed: {' '.join(prep.narrowing.flags())} ({len(prep.plan.units)} samples)",
                          markup=False, highlight=False)

        cfg = ws.resolve(config)
        try:
            result = engine.start(ws, cfg, tasks or [], phases.callback("run"), run_id, warn,
                                  measuring=golden, warn=_warn, executor=where, narrowing=narrowing)
        finally:
            phases.stop()
    for part in report_renderables(result.summary):
        _show(part)
    out.print(f"results: {result.folder.path}")
    if not thresholds_met(result.summary):
        err.print("[red]thresholds missed[/]")
        raise typer.Exit(1)


@app.command()
def status(
    run_id: Annotated[str | None, typer.Argument(help="Run id (default: list runs).")] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Show runs and their progress (the same state and counts as the API and the web UI)."""
    from benchwright.results.folder import RunFolder
    from benchwright.run.progress import read_progress

    ws = _ws(workspace)
    if run_id:
        folder = RunFolder(ws.run_dir(run_id))
        shown = dict(folder.status())
        progress = read_progress(shown)
        shown["state"] = progress.state
        if progress.reason:
            shown["reason"] = progress.reason
        shown["progress"] = progress.model_dump(mode="json", exclude={"state", "reason"})
        if (folder.path / "records.jsonl").is_file():  # why samples failed, so far
            from benchwright.results.export import folder_summary

            failures = folder_summary(folder).get("failures")
            if failures:
                shown["failures"] = failures
        sys.stdout.write(json.dumps(shown, indent=2, default=str) + "\n")
        return
    runs = sorted(ws.results.glob("*/run.yaml"), key=lambda p: p.stat().st_mtime) if ws.results.exists() else []
    if not runs:
        out.print(f"no runs in {ws.results}")
        return
    from rich.markup import escape
    from rich.table import Table

    from benchwright.errors import InfraError

    table = Table("run", "state", "samples done", "errors")
    for p in runs:
        try:
            progress = read_progress(RunFolder(p.parent).status())
        except InfraError as e:
            _warn(str(e))
            table.add_row(escape(p.parent.name), "damaged (see the warning)", "?", "?")
            continue
        state = progress.state + (" (resume with --resume)" if progress.resumable else "")
        table.add_row(escape(p.parent.name), escape(state), f"{progress.done}/{progress.total}", str(progress.errors))
    out.print(never_cut(table, out.width))


def _summary(ws: Workspace, run_id: str) -> tuple[Any, dict[str, Any]]:
    from benchwright.results.export import folder_summary
    from benchwright.results.folder import RunFolder

    folder = RunFolder(ws.run_dir(run_id))
    summary = folder_summary(folder)  # an unfinished run: summarised from what is there
    if summary.get("skipped_lines"):
        _warn_skipped(folder.path, summary["skipped_lines"])
    return folder, summary


def _warn_skipped(folder: Path, skipped: Any) -> None:
    """Warn about the lines of a run's files that could not be read, with their places."""
    from benchwright.results.jsonl import SkippedLines

    lines = skipped if isinstance(skipped, SkippedLines) else SkippedLines.model_validate(skipped)
    if lines:
        _warn(f"{lines.message(folder)}; the samples they belonged to are not scored "
              f"(`benchwright run --resume {folder.name}` runs them again)")


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(help="Run id, or 'latest'.")] = "latest",
    fmt: Annotated[str, typer.Option("--format", "-f", help="A report format: table, json, markdown, "
                                      "csv, or one a plug-in adds ('benchwright list "
                                      "report-formats').")] = "table",
    power: Annotated[bool, typer.Option("--power", help=(
        "Add how many tasks a 5 or 10 point difference in pass rate would need (table, markdown; "
        "json always has it)."))] = False,
    tasks: Annotated[bool, typer.Option(
        "--tasks", help="Per task instead: the model x task matrix (verdict, samples and tests passed, "
        "first failure) and the samples that did not pass; csv gives one row per sample.")] = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """The model x criterion table of a run, every mean with its standard error and 95 % interval
    (with --tasks: its model x task matrix)."""
    from benchwright.registry import registry

    folder, summary = _summary(_ws(workspace), run_id)
    if tasks:
        _report_tasks(folder, fmt)
        return
    report = registry.create("report-format", fmt)
    parts = report.renderables(summary, power=power)
    if parts is not None:
        for part in parts:
            _show(part)
    else:
        sys.stdout.write(report.report(summary, power=power))


def _report_tasks(folder: Any, fmt: str) -> None:
    from benchwright.results import tasks as per_task

    rows = per_task.samples_of(folder.records())
    writers = {"markdown": per_task.tasks_markdown, "csv": per_task.tasks_csv, "json": per_task.tasks_json}
    if fmt == "table":
        for part in per_task.tasks_tables(rows):
            _show(part)
    elif fmt in writers:
        sys.stdout.write(writers[fmt](rows))
    else:
        raise UserError(f"report --tasks --format {fmt}: use one of table, {', '.join(writers)}")


@app.command()
def export(
    run_id: Annotated[str, typer.Argument(help="Run id, or 'latest'.")] = "latest",
    fmt: Annotated[str, typer.Option("--format", "-f", help="An export format: junit, json, csv, "
                                      "markdown, or one a plug-in adds ('benchwright list "
                                      "export-formats').")] = "json",
    output: Annotated[Path | None, typer.Option("--out", "-o", help="File to write (default: stdout).")] = None,
    per: Annotated[str | None, typer.Option(
        "--per", help="csv: a row per 'sample' (outcome, tests passed, first failure; the default) or per "
        "'record' (every test case and criterion, all fields).")] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Export a run's records for CI and other tools."""
    from benchwright.results.export import export as do_export
    from benchwright.results.folder import RunFolder
    from benchwright.results.jsonl import SkippedLines
    from benchwright.yamldoc import atomic_write

    folder = RunFolder(_ws(workspace).run_dir(run_id))
    skipped = SkippedLines()
    per = per or ("sample" if fmt == "csv" else "record")
    if per not in ("record", "sample") or (per == "sample" and fmt != "csv"):
        raise UserError(f"--per {per}: give 'record', or 'sample' with --format csv")
    if per == "sample":
        from benchwright.results.tasks import samples_of, tasks_csv

        text = tasks_csv(samples_of(folder.records(skipped)))
    else:
        text = do_export(folder, fmt, skipped)
    _warn_skipped(folder.path, skipped)
    if output is None:
        sys.stdout.write(text)
    else:
        atomic_write(output, text)
        err.print(f"wrote {output}")


@app.command()
def compare(
    run_a: Annotated[str, typer.Argument(help="Baseline run.")],
    run_b: Annotated[str, typer.Argument(help="Run to compare with it.")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="A compare format: table, json, markdown, "
                                      "or one a plug-in adds ('benchwright list "
                                      "compare-formats').")] = "table",
    workspace: WorkspaceOpt = None,
) -> None:
    """Compare two runs: per model and criterion, and the tasks that flipped."""
    from benchwright.registry import registry
    from benchwright.results.compare import compare as do_compare
    from benchwright.results.folder import RunFolder

    ws = _ws(workspace)
    shape = registry.create("compare-format", fmt)
    folders = {"a": RunFolder(ws.run_dir(run_a)), "b": RunFolder(ws.run_dir(run_b))}
    result = do_compare(folders["a"], folders["b"])
    for side, skipped in result.skipped_lines.items():
        _warn_skipped(folders[side].path, skipped)
    parts = shape.renderables(result)
    if parts is not None:
        for part in parts:
            _show(part)
    else:
        sys.stdout.write(shape.compare(result))


@app.command("import")
def import_dataset(
    name: Annotated[str, typer.Argument(help="The importer: 'benchwright list importers' shows them.")],
    data_arg: Annotated[Path | None, typer.Argument(
        metavar="[FILE]", help="The dataset's file, as published (same as --data).")] = None,
    output: Annotated[Path | None, typer.Option("--out", "-o", help="Task source file to write.")] = None,
    data: Annotated[Path | None, typer.Option(
        help="The dataset's file as published: .jsonl, .jsonl.gz, .json or .parquet.")] = None,
    hf: Annotated[bool, typer.Option(
        "--hf", help="Load the dataset by name from the Hugging Face Hub (online; benchwright[datasets]).")] = False,
    hf_path: Annotated[str | None, typer.Option(
        help="With --hf: another Hub id, or a local folder of the dataset's Hub files.")] = None,
    language: Annotated[str | None, typer.Option(help="The language, for multi-language datasets.")] = None,
    subset: Annotated[str | None, typer.Option(help="The subset or version, where a dataset has several.")] = None,
    limit: Annotated[int | None, typer.Option(min=0, help="Only the first N tasks.")] = None,
    field: Annotated[list[str] | None, typer.Option(
        "--map", "-m", help="KEY=VALUE options of an importer; for jsonl, which JSON field holds name, "
        "prompt, tests, golden, entry_point, language, difficulty, area, tags, mode... (repeatable)")] = None,
) -> None:
    """Turn a public benchmark (or your own JSONL) into a task source: 'benchwright list importers'."""
    from benchwright.importers.base import ImportRequest
    from benchwright.registry import registry

    if output is None:
        raise UserError(f"import {name}: name the task source to write with --out FILE "
                        f"(e.g. --out tasks/{name}.yaml)")
    if data_arg is not None and data is not None:
        raise UserError(f"import {name}: give the data file once (FILE or --data)")
    options: dict[str, Any] = {}
    for item in field or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"--map {item!r}: write KEY=FIELD, e.g. --map prompt=text")
        options[key.strip()] = value.strip()
    importer = registry.create("importer", name)
    request = ImportRequest(data=data_arg or data, hf=hf, hf_path=hf_path, language=language,
                            subset=subset, limit=limit, options=options)
    _write_source(importer.load(request), output)


def _write_source(source: Any, output: Path) -> None:
    from benchwright.yamldoc import atomic_write, dump_text

    data = source.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    data = {"version": 1, **data}
    atomic_write(output, dump_text(data))
    err.print(f"wrote {len(source.tasks)} tasks to {output}")


def _ctrl_c_in_own_session() -> None:
    """A process that leads its own session (the server starts every run so; so may a script)
    has no terminal whose Ctrl-C it should ignore. If it inherited SIGINT ignored from its
    parent (a server's thread, a test runner's worker), a cancel or Ctrl-C would not stop it and
    a run would not end ``interrupted``: there SIGINT gets Python's own handler back. A shell's
    background job (in the shell's session) keeps its ignored SIGINT, as POSIX intends."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN and os.getsid(0) == os.getpid():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> None:
    """Entry point: user-fixable errors print without a traceback and exit 2; a failure of the
    harness, expected or not, exits 3 (never 1, which means a threshold was missed); a closed
    standard output (``| head``) exits 141 without a word."""
    _ctrl_c_in_own_session()
    guard_stdout()
    try:
        app()
    except OutputClosed:
        exit_quietly()
    except (InputError, UserError, MissingDependency) as e:
        if isinstance(e, InputError):
            for p in e.problems:
                err.print(p.render(), markup=False, highlight=False)
        else:
            err.print(f"error: {e}", markup=False, highlight=False)
        sys.exit(2)
    except BenchwrightError as e:
        err.print(f"error: {e}", markup=False, highlight=False)
        sys.exit(3)
    except KeyboardInterrupt:
        err.print("interrupted; finish with 'benchwright run --resume RUN_ID'")
        sys.exit(130)
    except Exception as e:  # a bug, or something nobody foresaw: the harness failed
        if _debug["on"] or os.environ.get(DEBUG_ENV, "") not in ("", "0"):
            import traceback

            traceback.print_exc()
        first = (str(e).strip().splitlines() or [""])[0][:300]
        err.print(f"error: benchwright failed unexpectedly ({type(e).__name__}: {first}); "
                  f"run the command again with --debug (or {DEBUG_ENV}=1) to see where",
                  markup=False, highlight=False)
        sys.exit(3)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


@app.command()
def serve(
    workspace_dir: Annotated[Path | None, typer.Argument(
        metavar="[WORKSPACE]", help="Workspace folder (default: nearest with benchwright.yaml).")] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    auth: Annotated[bool, typer.Option(help="Require tokens ('benchwright token create').")] = False,
    max_body_mb: Annotated[float, typer.Option(
        min=0.01, help="The largest request body accepted, in MiB (larger: 413).")] = MAX_BODY_MB,
) -> None:
    """Serve the REST API (OpenAPI at /api/docs) for a workspace."""
    import uvicorn

    from benchwright.server.api import create_app

    ws = _ws(workspace_dir)
    # the UI's store goes in the workspace, not wherever the server was started; only this
    # user may enter it (the UI keeps no token there, but what it keeps is nobody else's)
    store = ws.state / "ui"
    store.mkdir(parents=True, exist_ok=True)
    os.chmod(store, 0o700)
    os.environ.setdefault("NICEGUI_STORAGE_PATH", str(store))
    if auth:
        from benchwright.server.auth import TokenStore

        if not TokenStore(ws).list():
            err.print("benchwright serve: no tokens yet, so every request will be refused: create one "
                      "with 'benchwright token create --role admin'", markup=False, highlight=False)
    if not auth and host not in LOOPBACK:
        raise UserError(f"without --auth the server listens on loopback only (not {host!r}): "
                        "add --auth and create tokens with 'benchwright token create --role ...'")
    listening = _listen(host, port)  # before a word is printed: a busy port is the first thing said
    where = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    err.print(f"benchwright serve: {ws.root} at {where}/ui (API: {where}/api, docs: {where}/api/docs); "
              + ("tokens required (--auth)" if auth else "no authentication: loopback only"),
              markup=False, highlight=False)
    config = uvicorn.Config(create_app(ws, auth_on=auth, with_ui=True, max_body_mb=max_body_mb),
                            log_level="warning")
    uvicorn.Server(config).run(sockets=[listening])


def _listen(host: str, port: int) -> Any:
    """A socket bound to ``host:port`` and listening, or a :class:`UserError` naming the port and
    the fix (the server then takes this very socket: nothing can take the port in between)."""
    import errno
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise UserError(f"benchwright serve: port {port} on {host} is already in use (another "
                            f"server?); stop it or choose a free port with --port, e.g. --port "
                            f"{port + 1 if port < 65535 else 8765}") from None
        raise UserError(f"benchwright serve: cannot listen on {host}:{port} ({e.strerror or e}); "
                        "choose another address with --host or port with --port") from None


@app.command("serve-model")
def serve_model(
    turns: Annotated[Path, typer.Argument(metavar="TURNS.yaml", help="The scripted turns (see docs/serve-model.md).")],
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")] = 8766,
) -> None:
    """Serve a scripted model (no key needed) for agent CLIs and judges: OpenAI chat, Anthropic
    messages, the Responses API and Gemini on one port, until Ctrl-C."""
    import threading

    from benchwright.testing.script import ScriptedModel, ScriptedServer

    model = ScriptedModel.load(turns)
    server = ScriptedServer(model, host=host, port=port)
    try:
        server.start()
    except RuntimeError as exc:
        raise UserError(f"cannot listen on {host}:{port}: {exc.__cause__ or exc}") from None
    where = f"http://{'[' + host + ']' if ':' in host else host}:{server.port}"
    try:  # a Ctrl-C right after the banner (a script that waits for it) also stops it cleanly
        print(f"benchwright serve-model: {len(model.turns)} turns from {turns}\n"
              f"  OpenAI (chat, responses): OPENAI_BASE_URL={where}/v1 (any key)\n"
              f"  Anthropic:                ANTHROPIC_BASE_URL={where} (any key)\n"
              f"  Gemini:                   GOOGLE_GEMINI_BASE_URL={where} (any key)\n"
              "Ctrl-C stops it.", flush=True)
        threading.Event().wait()
    except KeyboardInterrupt:
        print("benchwright serve-model: stopped", flush=True)
    finally:
        server.stop()
