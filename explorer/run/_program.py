"""Running the user's program under ``pt2-explorer record`` exactly as ``python`` (or
torchrun) would: ``__main__``, ``__file__``, ``sys.argv``, ``sys.path[0]``, tracebacks, exit
codes and deaths by signal are the program's own."""

from __future__ import annotations

import atexit
import dataclasses
import os
import runpy
import signal
import sys
import weakref

from ..base._paths import OWN_DIRS, ours


def run(
    rec, script: str | None, module: str | None, args: list[str], supervisor=None
) -> tuple[int, bool, bool, bool]:
    """Run the program inside the recording ``rec``. Returns (exit code, interrupted by
    Ctrl-C, terminated by SIGTERM, Ctrl-C cut the recording's own ending short: the program
    had ended); the program's exception is printed as python prints it. ``supervisor``: the
    explorer/run/_supervise.py parent this process runs under, if any."""
    exit_code, interrupted, terminated = 0, False, False
    saved_argv, saved_path = sys.argv, list(sys.path)
    saved_term = _catch_sigterm(supervisor)
    programs: list[BaseException] = []  # what the program raised, if anything
    cut_short = False
    try:
        with rec:
            try:
                if script is not None:
                    # as `python SCRIPT`: argv[0] as given, __file__ and sys.path[0] absolute
                    sys.argv = [script, *args]
                    _run_script(os.path.abspath(script))
                else:  # as `python -m MODULE`: sys.path[0] the current directory
                    sys.argv = [module, *args]
                    sys.path.insert(0, os.getcwd())
                    _run_module(module)
            except BaseException as e:
                programs.append(e)
                raise
    except BaseException as e:
        ended: BaseException | None = e
        # a Ctrl-C while the recording ended, after the program: not the program's to show
        cut_short = isinstance(e, KeyboardInterrupt) and not any(e is p for p in programs)
        if cut_short:
            ended = programs[0] if programs else None
        terminated = isinstance(ended, _Terminated)
        if ended is not None:
            exit_code, interrupted = _ended(ended)
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
        still_ours = signal.getsignal(signal.SIGTERM) in _HANDLERS
        # after a SIGTERM under a supervisor, its repeat stays ignored until we die by it
        if saved_term is not None and still_ours and not (terminated and supervisor is not None):
            signal.signal(signal.SIGTERM, saved_term)
    return exit_code, interrupted, terminated, cut_short


def _ended(e: BaseException) -> tuple[int, bool]:
    """The exit code of a program that raised ``e``, and whether Ctrl-C ended it; its
    exception printed as python prints it."""
    if isinstance(e, SystemExit):
        return _exit_code(e.code), False
    if isinstance(e, _Terminated):  # torchrun stops the other ranks when one fails: keep what was recorded
        return 128 + signal.SIGTERM, False
    # the program's traceback as python prints it: through sys.excepthook, our frames and
    # runpy's left out
    tb = e.__traceback__
    while tb is not None and ours(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    if tb is not None or isinstance(e, SyntaxError):  # the script's own: no traceback, as python
        e.with_traceback(tb)  # the default hook prints the exception's own traceback
    sys.excepthook(type(e), e, e.__traceback__)
    return 1, isinstance(e, KeyboardInterrupt)


def module_file(module: str) -> str | None:
    """The file ``python -m MODULE`` would run (a package's ``__main__.py``), found as python
    finds it from the current directory, without importing anything (no package's
    ``__init__`` runs); None where it is not a file found so (runpy then says why)."""
    from importlib.machinery import PathFinder

    path: list[str] | None = [os.getcwd(), *sys.path]  # sys.path[0] is the directory under -m
    spec = None
    try:
        for part in module.split("."):
            if path is None:  # below a module that is no package
                return None
            spec = PathFinder.find_spec(part, path)
            if spec is None:
                return None
            path = spec.submodule_search_locations
        if path is not None:  # a package runs as its __main__
            spec = PathFinder.find_spec("__main__", path)
    except (ImportError, ValueError, OSError):
        return None
    return spec.origin if spec is not None and spec.has_location else None


def die_as_the_program_would(interrupted: bool, terminated: bool) -> None:
    """After the report is written: die by SIGINT (python's way on an uncaught
    KeyboardInterrupt) or SIGTERM, as the program itself would have."""
    for happened, sig in ((interrupted, signal.SIGINT), (terminated, signal.SIGTERM)):
        if happened:
            sys.stdout.flush()
            sys.stderr.flush()
            signal.signal(sig, signal.SIG_DFL)
            os.kill(os.getpid(), sig)


def warn_shadowing(directory: str) -> None:
    """The program's directory comes first on its sys.path: a compiler.py or explorer.py (or
    package) there is what the program means by `import compiler`, but PT2 Explorer's is
    already imported under that name. Say so: the program would get ours."""
    for name in ("compiler", "explorer"):
        for cand in (os.path.join(directory, name + ".py"), os.path.join(directory, name, "__init__.py")):
            if os.path.exists(cand) and not os.path.abspath(cand).startswith(OWN_DIRS):
                print(
                    f"pt2-explorer: warning: {cand} has the name of PT2 Explorer's `{name}` package, "
                    f"already imported: inside the program `import {name}` gives PT2 Explorer's, not "
                    "this file; rename the file to record this program unchanged",
                    file=sys.stderr,
                )


def without_launcher(report):
    """``report`` with the frames that ran the program left out of every stack it holds (graph
    breaks, guards, symbols, ...): each starts at the program, as under plain ``python``. The
    launcher's frames are the outermost run of our own and runpy's (``cli.py``, this file),
    with whatever called them (the ``pt2-explorer`` console script, ``python -m explorer``)."""
    from compiler.types import StackFrame

    def strip(obj):
        if isinstance(obj, tuple) and obj and all(isinstance(f, StackFrame) for f in obj):
            first = next((i for i, f in enumerate(obj) if ours(f.filename)), None)
            if first is None:
                return obj
            end = next((i for i in range(first, len(obj)) if not ours(obj[i].filename)), len(obj))
            return obj[end:]
        if isinstance(obj, tuple):
            items = tuple(strip(x) for x in obj)
            return obj if all(a is b for a, b in zip(items, obj)) else items
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            changed = {}
            for f in dataclasses.fields(obj):
                value = getattr(obj, f.name)
                new = strip(value)
                if new is not value:
                    changed[f.name] = new
            return dataclasses.replace(obj, **changed) if changed else obj
        return obj

    return strip(report)


def _run_module(module: str) -> None:
    """Run a module as ``python -m MODULE`` (``runpy.run_module(..., alter_sys=True)``) does,
    in a ``__main__`` module whose namespace python's exit clears (``_as_main``)."""
    import types

    try:
        _name, spec, code = runpy._get_module_details(module)  # runpy's own lookup and its errors
    except ImportError as e:  # as `python -m` says it: one line, status 1
        raise SystemExit(f"{sys.executable}: {e}") from None
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=spec.origin,
        __cached__=spec.cached,
        __doc__=None,
        __loader__=spec.loader,
        __package__=spec.parent,
        __spec__=spec,
    )
    sys.argv[0] = spec.origin  # as runpy's alter_sys
    _as_main(main, code)


def _as_main(main, code) -> None:
    """Run ``code`` in the module ``main``, ``sys.modules["__main__"]`` while it runs. Its
    namespace is cleared when this process ends, as python clears ``__main__``'s: Dynamo's
    caches keep it alive through the program's functions, and there a module-level file the
    program never closed would never be flushed, its objects' ``__del__`` never run."""
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    _ENDED.append(main.__dict__)
    try:
        exec(code, main.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


_ENDED: list[dict] = []  # the namespaces of the programs run here


def _clear_namespaces() -> None:
    """At exit, after the program's ``atexit`` handlers (and logging's shutdown, registered
    after this), each program's namespace cleared as CPython clears a module's
    (``_PyModule_ClearDict``): first the names with one leading underscore set to None, then
    every other name but ``__builtins__``; each object freed then is finalised (a file
    flushed and closed, ``__del__`` run) as under python."""
    while _ENDED:
        namespace = _ENDED.pop()
        for single in (True, False):
            for name in list(namespace):
                if not isinstance(name, str) or namespace[name] is None or name == "__builtins__":
                    continue
                if not single or (name.startswith("_") and not name.startswith("__")):
                    try:
                        namespace[name] = None
                    except Exception:  # as python: an object's __del__ failing is not ours to show
                        pass


# registered when this module is imported, before anything imports logging (explorer.cli keeps
# it so): atexit runs handlers last-registered first, so this runs after logging.shutdown and
# the program's own handlers, as python's clearing of __main__ comes after them
atexit.register(_clear_namespaces)


def _run_script(path: str) -> None:
    """Run a file as ``python FILE`` does: a fresh ``__main__`` module whose ``__file__`` is
    the absolute path, ``sys.path[0]`` its directory (sys.argv is set by the caller)."""
    import builtins
    import importlib.machinery
    import types

    with open(path, "rb") as f:  # bytes: compile() honours a coding cookie
        source = f.read()
    try:
        code = compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as e:
        raise _as_python_reads_files(e) from None
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=path,
        __cached__=None,
        __builtins__=builtins,
        __loader__=importlib.machinery.SourceFileLoader("__main__", path),
    )
    sys.path.insert(0, os.path.dirname(path))
    _as_main(main, code)


def _as_python_reads_files(e: SyntaxError) -> SyntaxError:
    """compile() of bytes words an encoding problem otherwise than python reading the file:
    "unknown encoding: a (prog.py, line 0)" for python's "encoding problem: a", with no place."""
    if e.lineno != 0:  # 0: the encoding declaration, before the first line
        return e
    msg = str(e.msg)
    if msg.startswith("unknown encoding: "):
        msg = "encoding problem: " + msg[len("unknown encoding: ") :]
    return SyntaxError(msg)


class _Terminated(BaseException):
    """SIGTERM turned into an exception, so that the recording ends and its report is
    written (torchrun sends SIGTERM to every rank when one of them fails)."""


def _catch_sigterm(supervisor=None):
    """Turn SIGTERM into _Terminated while the program runs; only where SIGTERM has its
    default action (the program did not install a handler) and in the main thread. Returns
    the handler to restore, or None when none was installed. A second SIGTERM kills at once:
    under a supervisor, which passes SIGTERM on and so may make it arrive twice (sent to
    the process group as torchrun does, and passed on), the repeat is ignored here and the
    supervisor kills this process at the second SIGTERM it receives itself."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return None

    def on_term(signum, frame):
        if supervisor is None:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM kills at once
        else:
            signal.signal(signal.SIGTERM, _ignore)
            supervisor.terminating()
        raise _Terminated(f"signal {signum} (SIGTERM)")

    _HANDLERS.add(on_term)
    _default_in_forks()
    signal.signal(signal.SIGTERM, on_term)
    return signal.SIG_DFL


def _ignore(signum, frame) -> None:
    pass


_HANDLERS: weakref.WeakSet = weakref.WeakSet([_ignore])  # our SIGTERM handlers
_fork_hook: list[bool] = []


def _default_in_forks() -> None:
    """A child the program forks (multiprocessing's workers) gets SIGTERM's default action
    back, as it would have without us: ``pool.terminate()`` ends workers silently."""
    if _fork_hook or not hasattr(os, "register_at_fork"):
        return
    _fork_hook.append(True)

    def in_child() -> None:
        try:
            if signal.getsignal(signal.SIGTERM) in _HANDLERS:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
        except (ValueError, OSError):  # forked from a thread that is not the main one
            pass

    os.register_at_fork(after_in_child=in_child)


def torchrun_rank() -> tuple[int | None, int | None]:
    """(rank, world size) from the environment torchrun sets, or (None, None)."""
    try:
        return int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    except (KeyError, ValueError):
        return None, None


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1
