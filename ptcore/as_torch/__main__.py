"""``python -m ptcore.as_torch PROGRAM.py [ARGS]``: run a PyTorch program on ptcore.

Also ``python -m ptcore.as_torch -m MODULE [ARGS]`` and ``-c CODE [ARGS]``.  The program sees
``sys.argv``, ``sys.path[0]``, ``__main__`` and ``__file__`` as under ``python PROGRAM.py``, and
its tracebacks start at its own frames.
"""
import os
import runpy
import sys
import types

from ptcore.as_torch import install

_USAGE = """usage: python -m ptcore.as_torch PROGRAM.py [ARGS...]
       python -m ptcore.as_torch -m MODULE [ARGS...]
       python -m ptcore.as_torch -c CODE [ARGS...]

Runs a Python program with `import torch` resolving to ptcore, in this process and in the
child interpreters it starts."""


def _launcher_frame(frame):
    name = frame.f_code.co_filename
    return name == __file__ or name in ("<frozen runpy>", runpy.__file__)


def _excepthook(exc_type, exc, tb):
    """sys.excepthook without the launcher's own frames at the top of the traceback."""
    program_tb = tb
    while program_tb is not None and _launcher_frame(program_tb.tb_frame):
        program_tb = program_tb.tb_next
    if program_tb is not None:
        tb = program_tb
        if exc is not None:
            exc.__traceback__ = tb
    sys.__excepthook__(exc_type, exc, tb)


def _fresh_main(**attrs):
    module = types.ModuleType("__main__")
    module.__dict__.update(__builtins__=__builtins__, __spec__=None, __package__=None, **attrs)
    sys.modules["__main__"] = module
    return module


def _run_file(path, args):
    if os.path.isdir(path) or not os.path.isfile(path) and os.path.exists(path):
        # a directory or zip file with __main__.py: runpy puts it at sys.path[0] itself
        del sys.path[0:0 if sys.flags.safe_path else 1]
        sys.argv = [path, *args]
        runpy.run_path(path, run_name="__main__")
        return
    # __main__.__file__ as Python makes it: joined to the working directory, not normalised
    full = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    try:
        with open(full, "rb") as f:
            source = f.read()
    except OSError as exc:
        print(f"{sys.executable}: can't open file {full!r}: [Errno {exc.errno}] {exc.strerror}",
              file=sys.stderr)
        sys.exit(2)
    if not sys.flags.safe_path:
        sys.path[0] = os.path.dirname(os.path.realpath(full))
    sys.argv = [path, *args]
    from importlib.machinery import SourceFileLoader
    module = _fresh_main(__file__=full, __cached__=None,
                         __loader__=SourceFileLoader("__main__", full))
    code = compile(source, full, "exec", dont_inherit=True)
    exec(code, module.__dict__)


def _run_code(code, args):
    if not sys.flags.safe_path:
        sys.path[0] = ""
    sys.argv = ["-c", *args]
    module = _fresh_main(__loader__=None)
    exec(compile(code, "<string>", "exec", dont_inherit=True), module.__dict__)


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stdout if argv else sys.stderr)
        sys.exit(0 if argv else 2)
    if argv[0] in ("-m", "-c") and len(argv) < 2:
        print(f"Argument expected for the {argv[0]} option\n\n{_USAGE}", file=sys.stderr)
        sys.exit(2)
    install()
    sys.excepthook = _excepthook
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]      # runpy replaces argv[0] with the module's file
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        _run_code(argv[1], argv[2:])
    else:
        _run_file(argv[0], argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
