"""``break`` and ``continue`` of scripted loops, rewritten into flags before
compilation (as TorchScript's exit transform does), so that the loop stays a
``prim::Loop``/``prim::While`` node of the graph.

A loop body with exits becomes, with ``$brkN`` carried by the loop and
``$skipN`` reset at the start of every iteration::

    for x in xs:                    for x in xs:              # stops when $brk
        if f(x):                        $skip = False
            break          ->           if f(x):
        y = g(x)                            $brk = True; $skip = True
                                        if not $skip:
                                            y = g(x)

``break`` sets both flags, ``continue`` sets ``$skip``; the statements after
a statement that may exit run under ``if not $skip``.  The compiler ends the
loop when ``$brk`` is set: ``prim::Loop`` with a continue condition, a
``while`` condition guarded by the flag.

``return`` inside a loop (:func:`loop_returns`) becomes a ``break`` that
first stores the value and sets ``$ret``; after the loop, ``if $ret: return
$rv`` (``if $ret: break`` in an enclosing loop)::

    for x in xs:                    $ret = False; $rv = None
        if f(x):                    for x in xs:
            return x       ->           if f(x):
    return y                                $rv = x; $ret = True; break
                                    if $ret:
                                        return $rv
                                    return y

A tuple returned in the loop is stored item by item (``$rv0, $rv1``) when
every such return has the same length, so that the caller can unpack it.
"""
import ast
import copy

__all__ = ["Exits", "loop_exits", "loop_returns", "located"]

_NESTED = (ast.For, ast.While, ast.AsyncFor, ast.FunctionDef, ast.AsyncFunctionDef,
           ast.Lambda, ast.ClassDef)


def _walk_own(stmts):
    """The nodes of ``stmts``, not entering nested loops and definitions
    (their ``break``/``continue`` are theirs)."""
    todo = list(stmts)
    while todo:
        n = todo.pop()
        yield n
        if not isinstance(n, _NESTED):
            todo.extend(ast.iter_child_nodes(n))


def _kinds(stmts):
    found = set()
    for n in _walk_own(stmts):
        if isinstance(n, (ast.Break, ast.Continue)):
            found.add(type(n))
    return found


class Exits:
    """The flags of one loop with exits and its rewritten body."""

    def __init__(self, body, brk, skip):
        self.brk = brk              # name of the carried break flag, or None
        self.skip = skip            # name of the per-iteration skip flag
        self.body = body            # the rewritten statements

    def reset(self, node):
        """``$skip = False`` for the start of an iteration (nothing when
        ``$skip`` is the break flag, which the loop carries)."""
        if self.skip == self.brk:
            return []
        return [located(_set(self.skip, False), node)]


def loop_exits(body, n):
    """An :class:`Exits` for loop body ``body`` (flags numbered ``n``), or
    None when the loop has no ``break``/``continue`` of its own."""
    kinds = _kinds(body)
    if not kinds:
        return None
    brk = f"$brk{n}" if ast.Break in kinds else None
    skip = f"$skip{n}" if ast.Continue in kinds else brk
    return Exits(_lower(list(body), brk, skip), brk, skip)


def _set(name, value):
    return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())],
                      value=ast.Constant(value=value))


def located(new, old):
    """``new`` placed at ``old``'s line (error messages name it)."""
    ast.copy_location(new, old)
    ast.fix_missing_locations(new)
    return new


def _always_exits(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Break, ast.Continue, ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _always_exits(last.body) and _always_exits(last.orelse)
    return False


def _lower(stmts, brk, skip):
    out = []
    for i, st in enumerate(stmts):
        if isinstance(st, ast.Break):
            out.append(located(_set(brk, True), st))
            if skip != brk:
                out.append(located(_set(skip, True), st))
            return out
        if isinstance(st, ast.Continue):
            out.append(located(_set(skip, True), st))
            return out
        if isinstance(st, (ast.If, ast.With)) and _kinds([st]):
            new = copy.copy(st)
            new.body = _lower(st.body, brk, skip)
            rest = _lower(stmts[i + 1:], brk, skip)
            if isinstance(st, ast.If):
                new.orelse = _lower(st.orelse, brk, skip)
                if rest and _always_exits(st.body) and not st.orelse:
                    # ``if c: break`` + rest: the rest is the else branch
                    new.orelse = rest
                    rest = []
                elif _always_exits(st.body) and _always_exits(st.orelse):
                    rest = []       # unreachable
            out.append(new)
            if rest:
                guard = ast.If(test=ast.UnaryOp(op=ast.Not(),
                                                operand=ast.Name(id=skip, ctx=ast.Load())),
                               body=rest, orelse=[])
                out.append(located(guard, stmts[i + 1]))
            return out
        if isinstance(st, ast.Try) and _kinds([st]):
            return out + [st]       # the compiler refuses try, naming its line
        out.append(st)
    return out


def _returns_in_loops(stmts, in_loop=False):
    """The ``return`` statements of ``stmts`` inside loops (not in nested
    definitions)."""
    for st in stmts:
        if isinstance(st, ast.Return):
            if in_loop:
                yield st
        elif isinstance(st, (ast.For, ast.While, ast.AsyncFor)):
            yield from _returns_in_loops(st.body, True)
        elif isinstance(st, (ast.If, ast.With, ast.Try)):
            for part in (st.body, getattr(st, "orelse", []), getattr(st, "finalbody", [])):
                yield from _returns_in_loops(part, in_loop)


def loop_returns(stmts):
    """Function body ``stmts`` with its returns inside loops rewritten into
    breaks (the statements themselves when it has none)."""
    rets = list(_returns_in_loops(stmts))
    if not rets:
        return stmts
    widths = {len(r.value.elts) if isinstance(r.value, ast.Tuple) else None for r in rets}
    width = widths.pop() if len(widths) == 1 else None
    names = [f"$rv{i}" for i in range(width)] if width else ["$rv"]
    init = [located(_set(n, None), stmts[0]) for n in ["$ret"] + names]
    init[0] = located(_set("$ret", False), stmts[0])
    return init + _lower_returns(list(stmts), False, names)


def _load(name):
    return ast.Name(id=name, ctx=ast.Load())


def _lower_returns(stmts, in_loop, names, top=True):
    """``top``: ``stmts`` is the function's body (``if $ret: return`` there;
    in a nested block the statements after a loop run under ``if not $ret``)."""
    out = []
    for i, st in enumerate(stmts):
        if isinstance(st, ast.Return) and in_loop:
            value = st.value if st.value is not None else ast.Constant(value=None)
            target = ast.Name(id=names[0], ctx=ast.Store()) if len(names) == 1 else \
                ast.Tuple(elts=[ast.Name(id=n, ctx=ast.Store()) for n in names],
                          ctx=ast.Store())
            out += [located(ast.Assign(targets=[target], value=value), st),
                    located(_set("$ret", True), st), located(ast.Break(), st)]
            return out
        if not any(True for _ in _returns_in_loops([st], in_loop)):
            out.append(st)
            continue
        new = copy.copy(st)
        if isinstance(st, (ast.For, ast.While, ast.AsyncFor)):
            new.body = _lower_returns(st.body, True, names, False)
        else:
            new.body = _lower_returns(st.body, in_loop, names, False)
            if isinstance(st, ast.If):
                new.orelse = _lower_returns(st.orelse, in_loop, names, False)
        out.append(new)
        if in_loop:         # an enclosing loop ends too (its break guards the rest)
            out.append(located(ast.If(test=_load("$ret"), body=[ast.Break()], orelse=[]), st))
        elif top:
            value = _load(names[0]) if len(names) == 1 else \
                ast.Tuple(elts=[_load(n) for n in names], ctx=ast.Load())
            out.append(located(ast.If(test=_load("$ret"), body=[ast.Return(value=value)],
                                      orelse=[]), st))
        else:
            rest = _lower_returns(stmts[i + 1:], False, names, False)
            if rest:
                out.append(located(ast.If(test=ast.UnaryOp(op=ast.Not(), operand=_load("$ret")),
                                          body=rest, orelse=[]), stmts[i + 1]))
            return out
    return out
