#!/usr/bin/env python3
"""Checks a perfscope flame graph SVG: well-formed XML, frames, widths against counts, colors.

usage: flame_check.py CHECK SVG [ARGS...]
  frames SVG                  prints "name<TAB>count<TAB>x<TAB>y<TAB>width<TAB>fill" per frame
  names SVG NAME...           every NAME is a frame's name
  proportional SVG            every frame's width is its count times one scale (0.02 px)
  subtitle SVG                prints the subtitle
Exits 1 with the reason on stderr when a check fails.
"""
import re
import sys
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'


def frames(path):
    root = ET.parse(path).getroot()  # raises on XML that is not well-formed
    if root.tag != NS + 'svg':
        sys.exit(f'{path}: the root element is {root.tag}, not svg')
    group = root.find(f".//{NS}g[@id='frames']")
    if group is None:
        sys.exit(f'{path}: no <g id="frames">')
    out = []
    for g in group.findall(NS + 'g'):
        title = g.find(NS + 'title').text
        m = re.match(r'^(.*) \((\d+) ', title)
        if not m:
            sys.exit(f'{path}: a frame title without its count: {title!r}')
        r = g.find(NS + 'rect')
        out.append({'name': m.group(1), 'count': int(m.group(2)), 'title': title,
                    'x': float(r.get('x')), 'y': float(r.get('y')),
                    'width': float(r.get('width')), 'fill': r.get('fill')})
    return root, out


def main():
    check, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    root, fr = frames(path)
    if check == 'frames':
        for f in fr:
            print('\t'.join(str(f[k]) for k in ('name', 'count', 'x', 'y', 'width', 'fill')))
    elif check == 'names':
        have = {f['name'] for f in fr}
        missing = [n for n in args if n not in have]
        if missing:
            sys.exit(f'{path}: no frame named {missing} (frames: {sorted(have)[:20]})')
    elif check == 'proportional':
        total = max(f['count'] for f in fr)
        widest = max(f['width'] for f in fr)
        scale = widest / total
        for f in fr:
            if abs(f['width'] - f['count'] * scale) > 0.02:
                sys.exit(f"{path}: {f['name']}: width {f['width']} for {f['count']} "
                         f"samples, expected {f['count'] * scale:.2f}")
        print(len(fr))
    elif check == 'subtitle':
        print(root.find(f".//{NS}text[@id='subtitle']").text)
    else:
        sys.exit(f'unknown check {check}')


if __name__ == '__main__':
    main()
