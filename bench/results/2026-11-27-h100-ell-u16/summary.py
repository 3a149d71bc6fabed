import json,glob,os,sys,collections
root=sys.argv[1]
best=collections.defaultdict(dict)  # (run, kernel/config) -> variant -> min median
for d in sorted(glob.glob(root+'/*/json')):
    v=os.path.basename(os.path.dirname(d))[:-1]
    for f in glob.glob(d+'/*.json'):
        run=os.path.basename(f)[:-5]
        try: j=json.load(open(f))
        except Exception: continue
        for r in j['results']:
            if not r.get('ok'): continue
            k=(run, r['kernel']+'/'+r['config'])
            best[k][v]=min(best[k].get(v,1e9), r['median_ms']*1e3)
vs=[]
for k in best:
    for v in best[k]:
        if v not in vs: vs.append(v)
vs.sort(key=lambda v:(v!='base',v))
print('%-42s'%'run kernel/config'+''.join('%10s'%v for v in vs))
for k in sorted(best):
    row=best[k]; b=row.get('base')
    if row and min(row.values())>2000: continue
    print('%-42s'%(k[0]+' '+k[1])[:42]+''.join(('%10.1f'%row[v] if v in row else '%10s'%'-') for v in vs))
