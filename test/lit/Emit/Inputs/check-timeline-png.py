#!/usr/bin/env python3
"""Checks a timeline picture as rendered: the PNG rsvg-convert made of
timeline.svg has the SVG's size (scaled to the PNG's width), and every lane
of the SVG shows events: in its row, inside the plot, enough pixels that are
neither the page's white nor the lane's idle grey.

Usage: check-timeline-png.py TIMELINE.svg TIMELINE.png LANES
Prints one line per lane and exits 1 on the first failure.
Standard library only: the PNG (8-bit RGB or RGBA, not interlaced) is
decoded here.
"""
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

SVG = "{http://www.w3.org/2000/svg}"
IDLE = (0xE4, 0xE4, 0xE4)
WHITE = (0xFF, 0xFF, 0xFF)


def fail(message):
    print("check-timeline-png: " + message)
    sys.exit(1)


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    """(width, height, rows of RGB tuples)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(
                ">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if depth != 8 or colour not in (2, 6) or interlace:
        fail("unexpected PNG format (depth %d, colour type %d)" % (depth, colour))
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + paeth(a, b, c)) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def main():
    if len(sys.argv) != 4:
        fail("usage: check-timeline-png.py TIMELINE.svg TIMELINE.png LANES")
    root = ET.parse(sys.argv[1]).getroot()
    if root.tag != SVG + "svg" or root.get("version") != "1.1":
        fail("not an SVG 1.1 document")
    svg_w, svg_h = float(root.get("width")), float(root.get("height"))
    lanes = [r for r in root.iter(SVG + "rect") if r.get("class") == "lane"]
    if len(lanes) != int(sys.argv[3]):
        fail("%d lanes, expected %s" % (len(lanes), sys.argv[3]))
    width, height, rows = read_png(sys.argv[2])
    scale = width / svg_w
    if abs(height - svg_h * scale) > 1:
        fail("PNG %dx%d, SVG %gx%g" % (width, height, svg_w, svg_h))
    print("png: %dx%d" % (width, height))
    for i, lane in enumerate(lanes):
        x0 = int(float(lane.get("x")) * scale) + 1
        x1 = int((float(lane.get("x")) + float(lane.get("width"))) * scale) - 1
        y0 = int(float(lane.get("y")) * scale) + 1
        y1 = int((float(lane.get("y")) + float(lane.get("height"))) * scale) - 1
        pixels = [rows[y][x] for y in range(y0, y1) for x in range(x0, x1)]
        busy = sum(1 for p in pixels if p != IDLE and p != WHITE)
        share = busy / max(1, len(pixels))
        print("lane %d: %.1f %% of its row shows events" % (i, 100 * share))
        if share < 0.01:
            fail("lane %d shows no events" % i)


if __name__ == "__main__":
    main()
