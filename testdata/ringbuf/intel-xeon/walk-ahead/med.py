import sys,re,collections,statistics,os
# med.py DIR: medians of Mrec/s per benchmark per variant, side by side
d=sys.argv[1]
vals=collections.defaultdict(lambda: collections.defaultdict(list))
vars_=[]
for f in sorted(os.listdir(d)):
    if not f.endswith('.txt'): continue
    v=f[:-4]; vars_.append(v)
    for line in open(os.path.join(d,f)):
        m=re.match(r'(BenchmarkRead/\S+?)(?:-\d+)?\s.*?([\d.]+) Mrec/s',line)
        if m: vals[m.group(1)][v].append(float(m.group(2)))
def key(b):
    m=re.search(r'size=(\d+)/mode=(\w+)/touch=(\w+)',b)
    return (m.group(3), int(m.group(1)), m.group(2)) if m else (b,0,'')
print('%-44s'%'bench'+''.join('%10s'%v for v in vars_))
for b in sorted(vals,key=key):
    print('%-44s'%b.replace('BenchmarkRead/','')+''.join('%10.1f'%statistics.median(vals[b][v]) if vals[b][v] else '%10s'%'-' for v in vars_))
