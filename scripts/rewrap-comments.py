#!/usr/bin/env python3
"""Re-wraps `///` and `//` comment lines longer than 120 columns in Swift files.

Usage: scripts/rewrap-comments.py [--check] [--limit N] PATH ...     (directories are searched for *.swift)

swift format breaks long code lines but never comments, and its lint does not report them; scripts/format.sh --fix
runs this tool after swift format. In every run of whole-line comments with the same indentation and marker, each
paragraph that holds a line over the limit is refilled from that line to the paragraph's end; the lines before it
stay as they are, so the diff stays small.

A paragraph ends at an empty comment line, a list item (`- `, `* `, `1. `, which includes DocC's `- Parameters:`),
or a fenced code block. A list item's continuation lines keep its hanging indent; backtick code spans are never
split. Left alone: fenced code, indented lines that are not a list item's continuation, table rows (`|`), separator
lines, `// MARK:`, `// swift-format-ignore`, and anything inside a multi-line string literal.

A comment after code (`x = 1  // why`) on a line over the limit is not moved but reported, as is a comment line that
cannot be broken (a long word, a code example), except table rows and a comment that is only a URL, which may be
long. --check changes nothing and exits 1 if it would change a file.
"""
import os
import re
import sys

LIMIT = 120
COMMENT = re.compile(r'^(?P<indent>[ \t]*)(?P<marker>///|//)(?P<space> ?)(?P<text>.*)$')
LIST_ITEM = re.compile(r'^(?:[-*+]|\d+[.)])\s+')
UNTOUCHABLE = re.compile(r'^(MARK:|swift-format-ignore|swiftlint|-{3,}|={3,}|\|)')
FENCE = re.compile(r'^(```|~~~)')
TRAILING_COMMENT = re.compile(r'\S\s+//\s')
SLASHES_IN_STRING = re.compile(r'"[^"]*//[^"]*"')
# Over the limit but allowed (scripts/format.sh does not report them either): a table row, a comment that is a URL.
EXEMPT = re.compile(r'^\s*//+\s*(\||\S*://\S*\s*$)')


def words(text):
    """The words of `text`; a backtick code span stays one word with whatever it is glued to."""
    out, current, ticks = [], '', None
    i = 0
    while i < len(text):
        if text[i] == '`':
            j = i
            while j < len(text) and text[j] == '`':
                j += 1
            run = text[i:j]
            if ticks is None:
                ticks = run
            elif run == ticks:
                ticks = None
            current += run
            i = j
            continue
        if text[i] == ' ' and ticks is None:
            if current:
                out.append(current)
            current = ''
        else:
            current += text[i]
        i += 1
    if current:
        out.append(current)
    return out


def fill(items, first_prefix, next_prefix, limit):
    lines, line = [], first_prefix + items[0]
    for word in items[1:]:
        if len(line) + 1 + len(word) <= limit:
            line += ' ' + word
        else:
            lines.append(line)
            line = next_prefix + word
    lines.append(line)
    return lines


def paragraphs(texts):
    """(start, end, hanging indent) of each paragraph in a block's comment texts; other lines belong to none."""
    result, start, hanging, in_fence = [], None, '', False

    def close():
        nonlocal start
        if start is not None:
            result.append((start, i, hanging))
        start = None

    for i, text in enumerate(texts):
        stripped = text.lstrip()
        leading = len(text) - len(stripped)
        item = LIST_ITEM.match(stripped)
        if FENCE.match(stripped):
            close()
            in_fence = not in_fence
        elif in_fence or not stripped or UNTOUCHABLE.match(stripped):
            close()
        elif item:
            close()
            start, hanging = i, ' ' * (leading + item.end())
        elif leading:
            if start is None or ' ' * leading != hanging:  # preformatted, not a list item's continuation
                close()
        elif start is None or hanging:  # a new paragraph, or text back at the margin after a list item
            close()
            start, hanging = i, ''
    i = len(texts)
    close()
    return result


def rewrap(prefixes, texts, limit):
    """The block's lines, with each paragraph that holds a line over `limit` refilled from that line on."""
    lines = [p + t for p, t in zip(prefixes, texts)]
    for start, end, hanging in reversed(paragraphs(texts)):
        long = [i for i in range(start, end) if len(lines[i]) > limit]
        if not long:
            continue
        first = long[0]
        prefix = prefixes[first].rstrip() + ' '
        text = texts[first]
        if first == start:
            stripped = text.lstrip()
            item = LIST_ITEM.match(stripped)
            bullet = item.group(0) if item else ''
            first_prefix = prefix + text[: len(text) - len(stripped)] + bullet
            body = [stripped[len(bullet):]]
        else:
            first_prefix = prefix + hanging
            body = [text.strip()]
        body += [texts[i].strip() for i in range(first + 1, end)]
        lines[first:end] = fill([w for part in body for w in words(part)], first_prefix, prefix + hanging, limit)
    return lines


def is_slashes(match):
    """Whether a comment line starts with four or more slashes (a divider, not prose)."""
    return not match.group('space') and match.group('text').startswith('/')


def process(path, limit, check):
    """Returns (changed, problems) for one file; writes it unless `check`."""
    with open(path, encoding='utf-8') as f:
        original = f.read()
    source = original.split('\n')
    out, problems, i, in_string = [], [], 0, False
    while i < len(source):
        match = None if in_string else COMMENT.match(source[i])
        if match and not is_slashes(match):
            key = (match.group('indent'), match.group('marker'))
            prefixes, texts = [], []
            while i < len(source):
                m = COMMENT.match(source[i])
                if not m or (m.group('indent'), m.group('marker')) != key or is_slashes(m):
                    break
                prefixes.append(m.group('indent') + m.group('marker') + m.group('space'))
                texts.append(m.group('text'))
                i += 1
            for line in rewrap(prefixes, texts, limit):
                out.append(line)
                if len(line) > limit and not EXEMPT.match(line):
                    problems.append((path, len(out), 'comment line over the limit that cannot be broken'))
            continue
        line = source[i]
        if line.count('"""') % 2 == 1:
            in_string = not in_string
        elif (len(line) > limit and not in_string and TRAILING_COMMENT.search(line)
              and not SLASHES_IN_STRING.search(line)):
            problems.append((path, len(out) + 1, 'code line over the limit with a trailing comment: move the comment'))
        out.append(line)
        i += 1
    result = '\n'.join(out)
    changed = result != original
    if changed and not check:
        with open(path, 'w', encoding='utf-8') as f:
            f.write(result)
    return changed, problems


def swift_files(paths):
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith('.'))
                yield from (os.path.join(root, name) for name in sorted(files) if name.endswith('.swift'))
        else:
            yield path


def main(argv):
    check, limit, paths = False, LIMIT, []
    args = iter(argv)
    for arg in args:
        if arg == '--check':
            check = True
        elif arg == '--limit':
            limit = int(next(args))
        elif arg in ('-h', '--help'):
            print(__doc__)
            return 0
        else:
            paths.append(arg)
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    changed_any = False
    for path in swift_files(paths):
        changed, problems = process(path, limit, check)
        if changed:
            changed_any = True
            print(f"rewrap-comments: {'would re-wrap' if check else 're-wrapped'} comments in {path}")
        for file, line, what in problems:
            print(f'{file}:{line}: {what}', file=sys.stderr)
    return 1 if check and changed_any else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
