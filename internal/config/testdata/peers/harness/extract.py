import subprocess, os, re, sys, hashlib
def git(repo, *a):
    return subprocess.run(['git','-C',repo]+list(a),capture_output=True,check=True).stdout
out_root=sys.argv[1]
repos={'k8s-netperf':'/work/.mirror/cloud-bulldozer+k8s-netperf/repo','tiger-bench':'/work/.mirror/projectcalico+tiger-bench/repo'}
cfgpat={'k8s-netperf':re.compile(r'^(netperf\.yml|k8s-netperf-config\.yaml|examples/.*\.ya?ml|testing/test-.*\.ya?ml)$'),
        'tiger-bench':re.compile(r'^(testconfig\.yaml|e2e-testconfig\.yaml|external_service_example\.yaml)$')}
docs={'k8s-netperf':re.compile(r'^(README\.md|docs/.*\.md)$'),'tiger-bench':re.compile(r'^(README\.md|.*/README\.md)$')}
tests={'k8s-netperf':re.compile(r'_test\.go$'),'tiger-bench':re.compile(r'^pkg/config/config_test\.go$')}
rows=[]
for name,repo in repos.items():
    commits=git(repo,'log','--all','--reverse','--format=%H').decode().split()
    seen=set()
    for c in commits:
        files=git(repo,'ls-tree','-r','--format=%(objectname) %(path)',c).decode().splitlines()
        for line in files:
            blob,path=line.split(' ',1)
            if path.startswith('vendor/'): continue
            kinds=[]
            if cfgpat[name].match(path): kinds.append('file')
            if docs[name].match(path): kinds.append('doc')
            if tests[name].search(path): kinds.append('test')
            for kind in kinds:
                content=git(repo,'cat-file','blob',blob).decode('utf-8','replace')
                items=[]
                if kind=='file':
                    items=[('',content)]
                elif kind=='doc':
                    for i,m in enumerate(re.finditer(r'```[a-z]*\n(.*?)```',content,re.S)):
                        items.append((f'#block{i+1}',m.group(1)))
                else:
                    # embedded configs: raw-string literals that look like a plan
                    for m in re.finditer(r'func (Test\w+)\(.*?\n}\n',content,re.S):
                        fn=m.group(1)
                        body=m.group(0)
                        tm=re.search(r'`([^`]*)`\s*\+\s*string\(mode\)\s*\+\s*`([^`]*)`',body)
                        if tm:
                            modes=re.findall(r'DNSPerfMode(\w+),',body)
                            for mode in modes:
                                items.append((f'#{fn}-{mode}',tm.group(1)+mode+tm.group(2)))
                            continue
                        for j,lit in enumerate(re.findall(r'`([^`]*)`',body)):
                            if re.search(r'testKind|profile:|tests:',lit):
                                items.append((f'#{fn}' + (f'-{j+1}' if j else ''),lit))
                for frag,text in items:
                    if kind=='doc' and not re.search(r'testKind|profile:',text): continue
                    key=(path+frag,hashlib.sha1(text.encode()).hexdigest())
                    if key in seen: continue
                    seen.add(key)
                    rows.append((name,path+frag,c[:12],text))
for name,src,c,text in rows:
    ext='.yaml' if name=='tiger-bench' else '.yml'
    fn=os.path.join(out_root,name,src.replace('/','__')+'@'+c+ext)
    os.makedirs(os.path.dirname(fn),exist_ok=True)
    open(fn,'w').write(text)
    print(name,src,c,len(text))
