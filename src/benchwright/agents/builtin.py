"""The built-in coding agent: a tool-calling loop over any provider that supports tools.

The model works in the workspace through five tools (OpenAI function tools, see :data:`TOOLS`):

* ``shell(command)``: ``/bin/sh -c command`` in the workspace (``/work`` inside) through
  :meth:`Sandbox.run_in`, without network, within ``command_timeout_s``; it gets the exit code and
  the tail of the output (stdout and stderr merged, at most ``output_tail_bytes``; of the first
  MiB of output); HOME is the sandbox's private /tmp (see :data:`SHELL_ENV`).
* ``read_file(path)``, ``write_file(path, content)``, ``edit_file(path, old, new)`` (``old``
  must occur exactly once): done by the harness on the host, so confined to the workspace
  strictly: a path is relative to it (``/work/...`` is taken as that), no ``..``, no absolute
  path elsewhere, nothing reached through a symbolic link leading outside, regular files only
  (never a FIFO or a device); writes replace the file (a new inode: a hard link is not
  followed).
* ``finish(response)``: ends the turn; ``response`` is the turn's final response.

A turn is one user message; the next turn appends the next message to the same conversation.
An answer with no tool call ends the turn too, its text being the response.

Limits (:class:`BuiltinLimits`), each ending the run with :attr:`AgentOutcome.stopped` set:

* ``max_steps``: tool calls in all (``finish`` is always honoured). When the last allowed call has
  run, its result tells the model to call ``finish``; any other call after it stops the run
  (``max_steps``).
* ``max_tokens``: prompt + completion tokens summed over the answers; no model call is made once
  the sum reaches it (``max_tokens``).
* ``timeout_s``: wall time of the whole run; a model call is cut at the deadline and a command's
  time limit never goes past it (``timeout``, with ``timed_out``).

A provider failure (after the engine's retries) ends the run with ``stopped`` = the error: the
run is graded on what it left. A sandbox failure is the harness's (``error``).

Calling it: :meth:`BuiltinAgent.arun` is a coroutine for the event loop the engine's providers
run on (e.g. ``asyncio.run_coroutine_threadsafe(agent.arun(folder, turns), loop).result()`` from
a worker thread); commands run in a thread (``asyncio.to_thread``) so the loop is never blocked.
:meth:`BuiltinAgent.run` is for callers without a loop (tests, scripts): a loop of its own, and
the provider's connections closed at the end (they belong to that loop).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from benchwright.agents.outcome import AgentOutcome
from benchwright.errors import InfraError, UnsafeFile, UserError
from benchwright.model.base import Answer, GenerationRequest, ToolCall
from benchwright.model.engine import GenerationEngine
from benchwright.safefs import Tree
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits

INSIDE = "/work"
"""Where the workspace is inside the sandbox (what the model is told)."""
READ_CAP = 64 * 1024
"""read_file returns at most this many bytes of a file (the rest: use shell)."""
EDIT_CAP = 8 * 1024 * 1024
"""edit_file works on files up to this size."""
WRITE_CAP = 8 * 1024 * 1024
"""write_file writes at most this much."""
TRAJECTORY_CHARS = 4000
"""A step's result (tail) and each string argument are cut to this in the trajectory."""
SHELL_ENV = {"HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1", "PAGER": "cat", "GIT_PAGER": "cat",
             "TERM": "dumb"}
"""The commands' environment (besides the sandbox's PATH, LANG, TMPDIR): HOME in the private
/tmp and no ``__pycache__``, so tool caches and byte code do not end up in the workspace's diff
(where every file counts, ignored ones included); no pager waiting on a closed stdin."""

SYSTEM_PROMPT = """\
You are a coding agent. You work in a software repository at {inside}, only through these tools:
- shell(command): runs a command with /bin/sh in {inside} (no network; at most {command_s:g} s; \
you get the exit code and the last {tail} bytes of the output).
- read_file(path), write_file(path, content), edit_file(path, old, new): files of the repository; \
paths are relative to {inside}. edit_file replaces `old`, which must occur exactly once in the file.
- finish(response): ends your turn; `response` is your final answer to the user.
Do the user's request with these tools: look at the code, change it, check your change (run the \
tests). Nobody answers questions until you call finish, so do not ask for confirmation. When you \
are done, or cannot go on, call finish with a short account of what you did. You may make at \
most {max_steps} tool calls in all."""


def _object(properties: dict[str, str]) -> dict[str, Any]:
    return {"type": "object",
            "properties": {k: {"type": "string", "description": v} for k, v in properties.items()},
            "required": list(properties), "additionalProperties": False}


def _tool(name: str, description: str, properties: dict[str, str]) -> dict[str, Any]:
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": _object(properties)}}


TOOLS: list[dict[str, Any]] = [
    _tool("shell", "Run a shell command (/bin/sh -c) in the repository folder /work. No network. "
          "Returns the exit code and the tail of its output (stdout and stderr together).",
          {"command": "the command line"}),
    _tool("read_file", "Read a text file of the repository.",
          {"path": "the file's path relative to /work"}),
    _tool("write_file", "Create or overwrite a file of the repository (its folders are made).",
          {"path": "the file's path relative to /work", "content": "the whole new content"}),
    _tool("edit_file", "Replace one exact piece of text in a file: `old` must occur exactly once.",
          {"path": "the file's path relative to /work", "old": "the exact text to replace",
           "new": "the text to put in its place"}),
    _tool("finish", "End your turn with your final response to the user.",
          {"response": "your final response: what you did and how it ended"}),
]
"""The tools offered to the model (OpenAI function tools)."""


@dataclass(frozen=True)
class BuiltinLimits:
    max_steps: int = 30
    """Tool calls in all (``finish`` excepted from the check)."""
    max_tokens: int = 200_000
    """Prompt + completion tokens summed over every answer."""
    timeout_s: float = 900
    """Wall seconds for the whole run."""
    command_timeout_s: float = 120
    """Wall seconds for one shell command."""
    output_tail_bytes: int = 8 * 1024
    """How much of the end of a command's output the model gets."""
    command_memory_mb: int = 4096
    """Address-space limit of a shell command (0: none)."""


class _ToolError(Exception):
    """A tool call that cannot be done; the message goes back to the model."""


@dataclass
class _Step:
    result: str
    ok: bool = True
    exit_code: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Run:
    workspace: Path
    root: Path
    deadline: float
    messages: list[dict[str, Any]]
    outcome: AgentOutcome
    tokens: int = 0
    answers: int = 0
    cpu_ms: float = 0.0
    costs: list[float] = field(default_factory=list)


class _Stop(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class BuiltinAgent:
    """The built-in agent over ``provider``/``model`` of ``engine``, running commands in
    ``sandbox``.

    Raises:
        UserError: the provider is not one of the engine's, or does not support tool calls.
    """

    def __init__(self, engine: GenerationEngine, provider: str, model: str, sandbox: Sandbox,
                 limits: BuiltinLimits | None = None, *, params: Mapping[str, Any] | None = None,
                 sample: int = 0, task: str = "") -> None:
        if provider not in engine.providers:
            raise UserError(f"the built-in agent's provider {provider!r} is not configured "
                            f"(known: {', '.join(sorted(engine.providers)) or 'none'})")
        made = engine.providers[provider]
        if not made.supports_tools:
            raise UserError(
                f"the built-in agent calls tools, which provider {provider!r} (type "
                f"{made.settings.type!r}) does not support: give it a model of an "
                "openai-compatible provider (OpenAI, OpenRouter, vLLM, Ollama, llama.cpp, LM Studio) "
                "or of an anthropic provider")
        self.engine = engine
        self.provider = provider
        self.model = model
        self.sandbox = sandbox
        self.limits = limits or BuiltinLimits()
        self.params = dict(params or {})
        """Request parameters (temperature, max_tokens of one answer, seed...)."""
        self.sample = sample
        """The sample index (part of the cache key: runs with different samples differ)."""
        self.task = task

    def system_prompt(self) -> str:
        return SYSTEM_PROMPT.format(inside=INSIDE, command_s=self.limits.command_timeout_s,
                                    tail=self.limits.output_tail_bytes,
                                    max_steps=self.limits.max_steps)

    # -- entry points --------------------------------------------------------------------------

    def run(self, workspace: Path, turns: list[str]) -> AgentOutcome:
        """:meth:`arun` on an event loop of its own (for callers without one)."""

        async def main() -> AgentOutcome:
            try:
                return await self.arun(workspace, turns)
            finally:
                await self.engine.providers[self.provider].aclose()

        return asyncio.run(main())

    async def arun(self, workspace: Path, turns: list[str]) -> AgentOutcome:
        """Work in ``workspace`` (a host folder: the sandbox's /work) on ``turns``, one user
        message each. Never raises for what the model or the provider did."""
        start = time.monotonic()
        outcome = AgentOutcome()
        state = _Run(workspace=workspace, root=Path(os.path.realpath(workspace)),
                     deadline=start + self.limits.timeout_s,
                     messages=[{"role": "system", "content": self.system_prompt()}],
                     outcome=outcome)
        finished_all = True
        try:
            for turn in turns:
                state.messages.append({"role": "user", "content": turn})
                response = await self._turn(state)
                outcome.responses.append(response)
        except _Stop as stop:
            finished_all = False
            outcome.stopped = stop.why
            outcome.timed_out = stop.why == "timeout"
        except InfraError as e:
            finished_all = False
            outcome.error = str(e)
        outcome.exit_code = 0 if finished_all else None
        outcome.wall_ms = (time.monotonic() - start) * 1000
        outcome.cpu_ms = state.cpu_ms
        if state.answers:
            outcome.cost_usd = sum(state.costs) if state.costs else None
        return outcome

    # -- the loop ------------------------------------------------------------------------------

    def _left(self, state: _Run) -> float:
        left = state.deadline - time.monotonic()
        if left <= 0.01:
            raise _Stop("timeout")
        return left

    async def _ask(self, state: _Run) -> Answer:
        if state.tokens >= self.limits.max_tokens:
            raise _Stop("max_tokens")
        left = self._left(state)
        request = GenerationRequest(
            model=self.model, mode="instruct", messages=list(state.messages), prompt="",
            language="", params=dict(self.params), sample=self.sample, task=self.task,
            tools=TOOLS)
        try:
            async with asyncio.timeout(left):
                got = await self.engine.answer(self.provider, request)
        except TimeoutError:
            raise _Stop("timeout") from None
        except Exception as e:  # a provider bug ends the run like a failed call
            raise _Stop(f"{type(e).__name__}: {e}") from None
        if got.answer is None:
            raise _Stop(got.error or "the provider gave no answer")
        answer = got.answer
        out = state.outcome
        state.answers += 1
        out.tokens_in = (out.tokens_in or 0) + (answer.tokens_in or 0)
        out.tokens_out = (out.tokens_out or 0) + (answer.tokens_out or 0)
        state.tokens += (answer.tokens_in or 0) + (answer.tokens_out or 0)
        if answer.cost_usd is not None:
            state.costs.append(answer.cost_usd)
        return answer

    async def _turn(self, state: _Run) -> str:
        """One turn: ask, run the calls, until ``finish`` or a text answer; the response."""
        said = ""
        try:
            while True:
                answer = await self._ask(state)
                said = answer.text or said
                if not answer.tool_calls:
                    state.messages.append({"role": "assistant", "content": answer.text})
                    return answer.text
                state.messages.append({
                    "role": "assistant", "content": answer.text or None,
                    "tool_calls": [{"id": c.id, "type": "function",
                                    "function": {"name": c.name, "arguments": c.arguments}}
                                   for c in answer.tool_calls]})
                response = await self._calls(state, answer)
                if response is not None:
                    return response
        except _Stop:
            state.outcome.responses.append(said)
            raise

    async def _calls(self, state: _Run, answer: Answer) -> str | None:
        """Run the calls of one answer in order; the response if one was ``finish``."""
        response: str | None = None
        for call in answer.tool_calls:
            if response is not None:
                self._reply(state, call, "not run: the turn had already ended with finish")
                continue
            if call.name == "finish":
                args, _ = _arguments(call)
                given = args.get("response") if args else None
                response = given if isinstance(given, str) else answer.text
                self._record(state, call, args, _Step("finished"), 0.0)
                self._reply(state, call, "finished")
                continue
            if state.outcome.steps >= self.limits.max_steps:
                raise _Stop("max_steps")
            self._left(state)
            begin = time.monotonic()
            args, problem = _arguments(call)
            try:
                if problem is not None:
                    raise _ToolError(problem)
                step = await self._do(state, call.name, args)
            except _ToolError as e:
                step = _Step(f"error: {e}", ok=False)
            ms = (time.monotonic() - begin) * 1000
            self._record(state, call, args if problem is None else call.arguments, step, ms)
            result = step.result
            if state.outcome.steps >= self.limits.max_steps:
                result += ("\n[step limit reached: no more tool calls will run; call finish with "
                           "your response]")
            self._reply(state, call, result)
            self._left(state)
        return response

    @staticmethod
    def _reply(state: _Run, call: ToolCall, content: str) -> None:
        state.messages.append({"role": "tool", "tool_call_id": call.id, "content": content})

    @staticmethod
    def _record(state: _Run, call: ToolCall, args: object, step: _Step, ms: float) -> None:
        out = state.outcome
        out.steps += 1
        entry: dict[str, Any] = {"step": out.steps, "tool": call.name,
                                 "arguments": _shorten(args), "result": _tail(step.result),
                                 "ok": step.ok}
        if call.name == "shell":
            entry["exit_code"] = step.exit_code
        entry.update(step.extra)
        entry["ms"] = round(ms, 1)
        out.trajectory.append(entry)

    # -- the tools -----------------------------------------------------------------------------

    async def _do(self, state: _Run, name: str, args: dict[str, Any]) -> _Step:
        if name == "shell":
            return await self._shell(state, _string(args, "command"))
        if name == "read_file":
            return _Step(read_file(state.root, _string(args, "path")))
        if name == "write_file":
            return _Step(write_file(state.root, _string(args, "path"), _string(args, "content")))
        if name == "edit_file":
            return _Step(edit_file(state.root, _string(args, "path"), _string(args, "old"),
                                   _string(args, "new")))
        names = ", ".join(t["function"]["name"] for t in TOOLS)
        raise _ToolError(f"there is no tool {name!r}; the tools are {names}")

    async def _shell(self, state: _Run, command: str) -> _Step:
        if not command.strip():
            raise _ToolError("the command is empty")
        lim = self.limits
        wall = min(lim.command_timeout_s, self._left(state))
        limits = SandboxLimits(wall_s=wall, memory_mb=lim.command_memory_mb,
                               output_bytes=1024 * 1024, file_size_mb=256, processes=256)
        argv = ["/bin/sh", "-c", "exec 2>&1\n" + command]
        try:
            result: ProcessResult = await asyncio.to_thread(
                self.sandbox.run_in, state.workspace, argv, limits=limits, env=dict(SHELL_ENV),
                network=False)
        except NotImplementedError as e:
            raise InfraError(f"the built-in agent needs a sandbox that runs in a folder: {e}") from e
        state.cpu_ms += result.cpu_ms
        output = result.stdout + result.stderr
        head = f"exit code: {result.exit_code}"
        if result.timed_out:
            head = f"timed out after {wall:g} s (killed)"
        elif result.exit_code is None:
            head = f"killed by signal {result.signal}"
        text = head + "\n" + _tail_bytes(output, lim.output_tail_bytes)
        return _Step(text.rstrip("\n"), ok=result.ok, exit_code=result.exit_code,
                     extra={"timed_out": True} if result.timed_out else {})


# -- arguments -----------------------------------------------------------------------------------


def _arguments(call: ToolCall) -> tuple[dict[str, Any], str | None]:
    """The call's arguments as an object, or a message for the model saying why not."""
    raw = call.arguments.strip() or "{}"
    try:
        value = json.loads(raw)
    except ValueError as e:
        return {}, f"the arguments of {call.name} are not valid JSON ({e})"
    if not isinstance(value, dict):
        return {}, f"the arguments of {call.name} must be a JSON object"
    return value, None


def _string(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    if not isinstance(value, str):
        raise _ToolError(f"the argument {key!r} is missing or not a string")
    return value


def _shorten(value: object) -> object:
    if isinstance(value, str):
        return value if len(value) <= TRAJECTORY_CHARS else value[:TRAJECTORY_CHARS] + " [...]"
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    return value


def _tail(text: str, limit: int = TRAJECTORY_CHARS) -> str:
    return text if len(text) <= limit else "[...] " + text[-limit:]


def _tail_bytes(data: bytes, limit: int) -> str:
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace")
    return f"[... {len(data) - limit} earlier bytes cut]\n" + \
        data[-limit:].decode("utf-8", errors="replace")


# -- files, confined to the workspace ----------------------------------------------------------


def confine(root: Path, path: str) -> Path:
    """The host path of ``path`` (relative to the workspace ``root``, a resolved path; or under
    ``/work``, its name inside), refusing anything that is, or leads, outside it.

    Raises:
        _ToolError: an absolute path elsewhere, a ``..``, a NUL, a symbolic link leading out.
    """
    if not path.strip():
        raise _ToolError("the path is empty")
    if "\0" in path:
        raise _ToolError("the path contains a NUL character")
    rel = path
    if rel == INSIDE or rel.startswith(INSIDE + "/"):
        rel = rel[len(INSIDE):].lstrip("/") or "."
    pure = PurePosixPath(rel)
    if pure.is_absolute():
        raise _ToolError(f"{path!r} is outside the repository: give a path relative to {INSIDE}")
    if ".." in pure.parts:
        raise _ToolError(f"{path!r} is refused: '..' is not allowed in a path")
    target = Path(os.path.realpath(root.joinpath(*pure.parts)))
    if target != root and root not in target.parents:
        raise _ToolError(f"{path!r} leads outside the repository (through a symbolic link)")
    return target


def _open_regular(root: Path, target: Path, path: str, cap: int) -> tuple[bytes, int, int]:
    """The first ``cap`` bytes of a regular file, its size and its mode: read through
    :class:`~benchwright.safefs.Tree`, so never through a symbolic link at any component (those
    inside were resolved by :func:`confine`; one made since is refused), never blocking on a
    FIFO."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        raise _ToolError(f"{path!r} does not exist") from None
    except OSError as e:
        raise _ToolError(f"cannot open {path!r}: {e.strerror}") from None
    if stat.S_ISDIR(st.st_mode):
        raise _ToolError(f"{path!r} is a folder (list it with shell: ls)")
    if not stat.S_ISREG(st.st_mode):
        raise _ToolError(f"{path!r} is not a regular file")
    try:
        got = Tree(root).read(target.relative_to(root).as_posix(), cap, one_name=False)
    except UnsafeFile as e:
        raise _ToolError(f"cannot open {path!r}: {e}") from None
    if got is None:
        raise _ToolError(f"{path!r} does not exist")
    return got.data, got.size, got.mode


def read_file(root: Path, path: str) -> str:
    target = confine(root, path)
    data, size, _ = _open_regular(root, target, path, READ_CAP)
    if b"\0" in data:
        return f"{path!r} is a binary file ({size} bytes)"
    text = data.decode("utf-8", errors="replace")
    if size > len(data):
        text += (f"\n[file cut: these are the first {len(data)} of {size} bytes; read the rest "
                 "with shell, e.g. sed -n or tail]")
    return text


def _replace(root: Path, target: Path, path: str, data: bytes, mode: int) -> None:
    """Write ``data`` as a new file put in place of ``target`` (never through a link: see
    :meth:`benchwright.safefs.Tree.write`)."""
    if target.is_dir() and not target.is_symlink():
        raise _ToolError(f"{path!r} is a folder")
    try:
        Tree(root).write(target.relative_to(root).as_posix(), data, mode=mode, clear=False)
    except UnsafeFile as e:
        raise _ToolError(f"cannot write {path!r}: {e}") from None
    except OSError as e:
        raise _ToolError(f"cannot write {path!r}: {e.strerror}") from None


def write_file(root: Path, path: str, content: str) -> str:
    target = confine(root, path)
    if target == root:
        raise _ToolError("the path names the repository folder itself")
    data = content.encode("utf-8")
    if len(data) > WRITE_CAP:
        raise _ToolError(f"the content is {len(data)} bytes; at most {WRITE_CAP} may be written")
    mode = 0o644
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        existed = False
    else:
        existed = True
        if stat.S_ISREG(st.st_mode):
            mode = stat.S_IMODE(st.st_mode)
    _replace(root, target, path, data, mode)
    return f"{'overwrote' if existed else 'created'} {path} ({len(data)} bytes)"


def edit_file(root: Path, path: str, old: str, new: str) -> str:
    target = confine(root, path)
    if not old:
        raise _ToolError("`old` is empty: give the exact text to replace")
    data, size, mode = _open_regular(root, target, path, EDIT_CAP + 1)
    if size > EDIT_CAP:
        raise _ToolError(f"{path!r} is too large to edit ({size} bytes): use shell")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _ToolError(f"{path!r} is not UTF-8 text") from None
    count = text.count(old)
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        raise _ToolError(f"`old` {where} in {path}; it must occur exactly once (give more context)")
    updated = text.replace(old, new, 1)
    _replace(root, target, path, updated.encode("utf-8"), mode)
    line = text[: text.index(old)].count("\n") + 1
    return f"edited {path} at line {line}"
