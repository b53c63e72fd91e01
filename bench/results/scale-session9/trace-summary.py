import json,sys
# old-gen growth between full GCs while caught up; prints per 5 s rows
for f in sys.argv[1:]:
    rows=[json.loads(l) for l in open(f) if '"t"' in l]
    print(f, len(rows))
    for d in rows:
        if int(d['t'])%5==0 or d['gcs']['major']>0:
            print(' ', d['t'], 'rss',d['rss'],'used',d['heapUsed'],'new',d['spaces']['new'],'old',d['spaces']['old'],'lo',d['spaces']['large_object'],'ext',d['external'],'gc',d['gcs']['minor'],d['gcs']['major'],'cpu',round(d['cpu'],2))
