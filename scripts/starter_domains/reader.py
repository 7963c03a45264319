"""The table reader of the tasks' solutions, and of the golds: its imports and functions are copied verbatim
into every `solution` (a `python3` heredoc run over /workspace/documents), so they are written in the style of
the committed tasks/*.jsonl, not restyled (see pyproject.toml's per-file ignores).

- tables/num/cell/grab/fmt: the starter domains (a cell by row key and column header, a figure in running
  text, an answer in its format);
- table/q: the demo domain (the first Markdown table as dicts, a Decimal rounded half-even).
"""

import re
from decimal import Decimal as D, ROUND_HALF_EVEN


def tables(name):
    out, cur = [], []
    for line in open('/workspace/documents/' + name, encoding='utf-8'):
        if line.startswith('|'):
            cur.append([c.strip().strip('*').strip() for c in re.split(r'(?<!\\)\|', line.strip())[1:-1]])
        elif cur:
            out.append(cur)
            cur = []
    return out + ([cur] if cur else [])


def num(text, comma=False):
    text = text.replace('\u00a0', '').replace(' ', '')
    text = text.replace('.', '').replace(',', '.') if comma else text.replace(',', '')
    return D(text)


def cell(name, key, col, comma=False):
    # the cell in the row whose first column is key; key '*' sums the whole column
    for t in tables(name):
        if col in t[0]:
            j = t[0].index(col)
            if key == '*':
                return sum(num(row[j], comma) for row in t[2:])
            for row in t[2:]:
                if row and row[0] == key:
                    return num(row[j], comma)
    raise SystemExit(f'{name}: no cell {key!r} / {col!r}')


def grab(name, pattern):
    # the first group of the first match of pattern in the document's text
    m = re.search(pattern, open('/workspace/documents/' + name, encoding='utf-8').read())
    if not m:
        raise SystemExit(f'{name}: no match for {pattern!r}')
    return num(m.group(1))


def fmt(x, answer_format):
    m = re.search(r'x(?:\.(x+))?', answer_format)
    places = len(m.group(1) or '') if m else 0
    x = x.quantize(D(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
    text = f'{x:+}' if ('[sign]' in answer_format or answer_format.startswith('+')) else f'{x}'
    return text + (answer_format[m.end():] if m else '')


def table(name):
    rows = [l.strip().strip('|').split('|') for l in open('/workspace/documents/' + name, encoding='utf-8')
            if l.startswith('|')]
    head = [c.strip() for c in rows[0]]
    return [dict(zip(head, [c.strip() for c in r])) for r in rows[2:]]


def q(x, places):
    return x.quantize(D(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
