import re, sys
def parse(text, func=None):
    if func:
        parts = re.split(r'\n\s+Function : ', text)
        text = [p for p in parts if p.startswith(func)][0]
    lines = text.split('\n')
    out = []
    i = 0
    while i < len(lines):
        m = re.match(r'\s+/\*([0-9a-f]{4,5})\*/\s+(.*?)\s*;?\s*/\* (0x[0-9a-f]{16}) \*/', lines[i])
        if m:
            lo = int(m.group(3), 16)
            m2 = re.search(r'/\* (0x[0-9a-f]{16}) \*/', lines[i + 1])
            hi = int(m2.group(1), 16)
            word = lo | (hi << 64)
            ctl = word >> 105
            stall = ctl & 0xf; yld = (ctl >> 4) & 1; wb = (ctl >> 5) & 7; rb = (ctl >> 8) & 7; wait = (ctl >> 11) & 0x3f; reuse = (ctl >> 17) & 0xf
            out.append((m.group(1), m.group(2).strip(), stall, yld, wb, rb, wait))
            i += 2
        else:
            i += 1
    return out
if __name__ == '__main__':
    f, start, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    func = sys.argv[4] if len(sys.argv) > 4 else None
    ins = parse(open(f).read(), func)
    shfl = [k for k, x in enumerate(ins) if 'SHFL' in x[1]]
    k0 = shfl[start]
    for addr, txt, stall, yld, wb, rb, wait in ins[k0 - 3:k0 + n]:
        w = ''.join(str(b) for b in range(6) if wait >> b & 1)
        print(f"{addr} S{stall:<2} {'W'+str(wb) if wb != 7 else '  '} {'R'+str(rb) if rb != 7 else '  '} {'wait'+w if w else '':9} {txt[:60]}")
