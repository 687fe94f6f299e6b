"""``FileCheck``: LLVM-FileCheck-style pattern checks over text, used on the
printed form of ``ptcore.jit`` graphs (``torch.testing.FileCheck``).

Checks are matched in order against the text; ``check_not`` and ``check_dag``
checks in a row form one group (the nots must not occur between the matches
around them; the dags may match in any order).  A failed check raises
``RuntimeError`` with torch's message: what was (not) found, the searched text
with the match underlined (``~~~ <--- HERE``) and the check that failed.
"""
import re
import sys

__all__ = ["FileCheck"]

_CONTEXT = 3            # lines of text shown around a highlighted range

_CHECK, _NEXT, _SAME, _NOT, _COUNT, _DAG, _HIGHLIGHTED, _REGEX = (
    "CHECK", "CHECK-NEXT", "CHECK-SAME", "CHECK-NOT", "CHECK-COUNT", "CHECK-DAG",
    "CHECK-SOURCE-HIGHLIGHTED", "CHECK-REGEX")

# directive suffixes after "# CHECK", in the order they are tried
_DIRECTIVES = ((_CHECK, ": "), (_NEXT, "-NEXT: "), (_SAME, "-SAME: "), (_NOT, "-NOT: "),
               (_DAG, "-DAG: "), (_COUNT, "-COUNT-"), (_HIGHLIGHTED, "-SOURCE-HIGHLIGHTED: "),
               (_REGEX, "-REGEX: "))

_ESCAPES = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f",
            "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _quoted(s):
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif " " <= ch < "\x7f" or ord(ch) > 0x7f:
            out.append(ch)
        else:
            out.append(f"\\{ord(ch):03o}")
    return '"' + "".join(out) + '"'


def _highlight(text, start, end):
    """``text`` around ``[start, end)``: up to three lines of context either side,
    the range's lines underlined with ``~`` (torch's ``SourceRange.highlight``,
    including its handling of ranges whose end lies before their start)."""
    n = len(text)
    if end - start == n:
        return text
    stop = min(n, end)
    if start > n:
        return ""

    def char(i):
        return text[i] if i < n else "\0"

    line_begin = start
    while line_begin > 0 and text[line_begin - 1] != "\n":
        line_begin -= 1
    line_stop = stop
    while line_stop < n and text[line_stop] != "\n":
        line_stop += 1
    context_begin, seen = line_begin, 0
    while context_begin > 0:
        seen += text[context_begin - 1] == "\n"
        if seen >= _CONTEXT:
            break
        context_begin -= 1
    context_end, seen = line_stop, 0
    while context_end < n:
        seen += text[context_end] == "\n"
        if seen >= _CONTEXT:
            break
        context_end += 1

    out = [text[context_begin:start]]
    line_start = line_end = start
    while line_start < stop:
        while line_end < n and text[line_end] != "\n":
            line_end += 1
        line = text[line_start:line_end + 1]
        out.append(line if line.endswith("\n") else line + "\n")
        first = line_start
        while first > 0 and text[first - 1] != "\n":
            first -= 1
        last = line_start
        while last < stop and text[last] != "\n":
            last += 1
        blank = 0
        for i in range(first, last):
            if text[i] != " " and i >= start:
                break
            blank += 1
        marked = last - first - blank
        if marked > 0:
            more = any(char(i) not in "\n " for i in range(line_end, stop + 1))
            tail = "\n" if more and line_end != stop else " <--- HERE\n"
            out.append(" " * blank + "~" * marked + tail)
        line_end += 1
        line_start = line_end
    if line_end <= n:
        rest = text[line_end:context_end] if context_end >= line_end else text[line_end:]
        out.append(rest if not rest or rest.endswith("\n") else rest + "\n")
    return "".join(out)


class _Check:
    __slots__ = ("kind", "text", "count")

    def __init__(self, kind, text, count=None):
        self.kind, self.text, self.count = kind, text, count

    def __str__(self):
        kind = f"{self.kind}-{self.count}" if self.kind == _COUNT else self.kind
        return f"{kind}: {self.text}"


def _find(text, sub, start, check, end=None):
    """Position of ``sub`` in ``text[start:end]``; raises torch's message if absent."""
    end = len(text) if end is None else end
    pos = text.find(sub, start)
    if pos < 0 or pos + len(sub) > end:
        message = (f"Expected to find {_quoted(sub)} but did not find it\nSearched string:\n"
                   + _highlight(text, start, len(sub)))
        if check is not None:
            message += f"From {check}\n"
        raise RuntimeError(message)
    return pos


def _find_not(text, sub, start, end, check):
    pos = text.find(sub, start)
    if pos >= 0 and pos + len(sub) <= end:
        raise RuntimeError(f"Expected to not find {_quoted(sub)} but found it\n"
                           + _highlight(text, pos, pos + len(sub)) + f"From {check}\n")


class FileCheck:
    """Check that text (or a ``ptcore.jit`` graph) contains patterns, in order
    (``torch.testing.FileCheck``).

    Each ``check*`` method adds a check and returns the ``FileCheck``; ``run``
    applies them and raises ``RuntimeError`` at the first that fails.

    Examples
    --------
    >>> import ptcore
    >>> from ptcore.testing import FileCheck
    >>> g = ptcore.jit.trace(lambda x: (x * 2).relu(), ptcore.ones(3)).graph
    >>> FileCheck().check("aten::mul").check_next("aten::relu").check_not("aten::add").run(g)
    """

    __module__ = "ptcore"               # ptcore.FileCheck, as torch.FileCheck

    def __init__(self):
        self._checks = []
        self._groups = []
        self._has_run = False

    def __del__(self):
        # torch prints this when an instance is dropped with checks it never ran
        if not getattr(self, "_has_run", True):
            try:
                print("You have not run this instance of FileCheck!\nFileCheck checks:\n"
                      + "".join(f"\t{c}\n" for c in self._checks), end="")
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass

    def _add(self, kind, text, count=None):
        check = _Check(kind, text, count)
        last = self._groups[-1] if self._groups else None
        if kind in (_NOT, _DAG) and last is not None and last[0].kind == kind:
            last.append(check)
        else:
            self._groups.append([check])
        self._checks.append(check)
        self._has_run = False
        return self

    def check(self, s):
        """``s`` occurs after the previous match."""
        return self._add(_CHECK, s)

    def check_not(self, s):
        """``s`` does not occur between the previous and the next match."""
        return self._add(_NOT, s)

    def check_same(self, s):
        """``s`` occurs on the line of the previous match, after it."""
        return self._add(_SAME, s)

    def check_next(self, s):
        """``s`` occurs on the line after the previous match."""
        return self._add(_NEXT, s)

    def check_count(self, s, count, exactly=False):
        """``s`` occurs ``count`` times after the previous match (and no more, with ``exactly``)."""
        count = int(count)
        if count == 0 and not exactly:
            raise RuntimeError("Count == 0 && !exactly doesn't do anything")
        if count:
            self._add(_COUNT, s, count)
        if exactly:
            self._add(_NOT, s)
        return self

    def check_dag(self, s):
        """``s`` occurs after the previous match; consecutive dag checks in any order."""
        return self._add(_DAG, s)

    def check_source_highlighted(self, s):
        """``s`` occurs underlined by ``~`` on the next line (an error's source highlight)."""
        return self._add(_HIGHLIGHTED, s)

    def check_regex(self, s):
        """A match of the regular expression ``s`` occurs after the previous match."""
        return self._add(_REGEX, s)

    def run(self, checks_or_text, text=None):
        """Apply the checks to ``text`` (a string or a ``ptcore.jit`` graph).

        ``run(checks, text)`` first adds the checks written in ``checks`` as
        ``# CHECK: s``, ``# CHECK-NEXT: s``, ``# CHECK-COUNT-2: s``,
        ``# CHECK-COUNT-EXACTLY-2: s``, ... lines.
        """
        if text is None:
            checks, text = None, checks_or_text
        else:
            checks = checks_or_text
        # a jit graph exists only once ptcore.jit is imported (it is not, with ptcore.testing)
        ir = sys.modules.get("ptcore.jit._ir")
        is_graph = ir is not None and isinstance(text, ir.Graph)
        if checks is not None and not isinstance(checks, str) or \
                not (isinstance(text, str) or is_graph):
            raise TypeError("run(): incompatible function arguments. The following argument "
                            "types are supported: (str), (Graph), (checks_file: str, "
                            "test_file: str), (checks_file: str, graph: Graph); got "
                            f"{type(checks_or_text).__name__}"
                            + ("" if checks is None else f", {type(text).__name__}"))
        if is_graph:
            text = str(text)
        if checks is not None:
            self._parse(checks)
        self._has_run = True
        if not self._groups:
            raise RuntimeError("No checks have been added to this instance of"
                               "Filecheck! Check for bad input.")
        self._match_all(text)

    # -- parsing "# CHECK...: s" lines ----------------------------------------------

    @staticmethod
    def _next_directive(src, pos):
        """The position just after the next ``#<up to 6 blanks>CHECK``, or -1."""
        while True:
            pos = src.find("#", pos)
            if pos < 0:
                return -1
            pos += 1
            blanks = 0
            while pos + blanks < len(src) and blanks < 6 and src[pos + blanks] in " \t":
                blanks += 1
            if src.startswith("CHECK", pos + blanks):
                return pos + blanks + len("CHECK")
            pos += blanks + 1

    def _parse(self, src):
        pos = self._next_directive(src, 0)
        while pos >= 0:
            for kind, suffix in _DIRECTIVES:
                if src.startswith(suffix, pos):
                    break
            else:
                self._has_run = True
                raise RuntimeError("Could not parse check at:\n" + _highlight(src, pos, pos + 1)
                                   + "Check for bad input.")
            begin = pos + len(suffix)
            line_end = src.find("\n", begin)
            line_end = len(src) if line_end < 0 else line_end
            count, exactly = None, False
            if kind == _COUNT:
                if src.startswith("EXACTLY-", begin):
                    exactly, begin = True, begin + len("EXACTLY-")
                colon = _find(src, ":", begin, None, line_end)
                count = int(src[begin:colon])
                begin = colon + 2
            self._add(kind, src[begin:line_end], count)
            if exactly:
                self._add(_NOT, src[begin:line_end])
            pos = self._next_directive(src, line_end)

    # -- matching ------------------------------------------------------------------------

    def _match_all(self, text):
        prev = (0, 0)
        i = 0
        while i < len(self._groups):
            group = self._groups[i]
            if group[0].kind != _NOT:
                prev = self._match(group, text, prev)
            elif i + 1 < len(self._groups):
                after = self._match(self._groups[i + 1], text, prev)
                self._forbid(group, text, prev[1], after[0])
                prev = after
                i += 1
            else:
                self._forbid(group, text, prev[1], len(text) + 1)
            i += 1

    @staticmethod
    def _forbid(nots, text, start, end):
        if end >= start:
            for check in nots:
                _find_not(text, check.text, start, end, check)

    def _match(self, group, text, prev):
        """The span ``(start, end)`` the group matches after ``prev``."""
        check = group[0]
        s, start = check.text, prev[1]
        if check.kind == _DAG:
            spans = [(p, p + len(c.text)) for c in group
                     for p in (_find(text, c.text, start, c),)]
            return min(b for b, _ in spans), max(e for _, e in spans)
        if check.kind == _CHECK:
            pos = _find(text, s, start, check)
        elif check.kind == _SAME:
            pos = _find(text, s, start, check)
            _find_not(text, "\n", start, pos, check)
        elif check.kind == _NEXT:
            newline = _find(text, "\n", start, check)
            pos = _find(text, s, newline + 1, check)
            _find_not(text, "\n", newline + 1, pos, check)
        elif check.kind == _COUNT:
            first = None
            for _ in range(check.count):
                start = _find(text, s, start, check)
                first = start if first is None else min(first, start)
                start += len(s)
            return first, start
        elif check.kind == _REGEX:
            found = re.compile(s).search(text, start)
            if found is None:
                raise RuntimeError(f"Expected to find regex {_quoted(s)} but did not find it\n"
                                   f"Searched string:\nFrom {check}\n")
            pos = found.start()
        else:
            self._check_highlighted(check, text, start)
            return start, start
        return pos, pos + len(s)

    @staticmethod
    def _check_highlighted(check, text, start):
        s = check.text

        def not_highlighted(at):
            raise RuntimeError(f"Expected to find {_quoted(s)}highlighted but it is not.\n"
                               + _highlight(text, at, len(s)))

        line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        search = start
        found_once = False
        while True:
            pos = text.find(s, search)
            if pos < 0:
                break
            found_once = True
            line = max(i for i, b in enumerate(line_starts) if b <= pos)
            if line + 1 >= len(line_starts):
                not_highlighted(pos)
            below = line_starts[line + 1] + (pos - line_starts[line])
            below_end = min(below + len(s), len(text))
            if below_end >= len(text):
                not_highlighted(pos)
            if all(text[i] == "~" for i in range(below, below_end)):
                _find_not(text, "~", below - 1, below, check)
                _find_not(text, "~", below_end, below_end + 1, check)
                return
            search = pos + 1
        if not found_once:
            _find(text, s, start, check)
        not_highlighted(start)
