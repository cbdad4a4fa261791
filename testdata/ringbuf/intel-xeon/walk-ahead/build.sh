#!/bin/bash
# build.sh NAME 'replacement line for the walk's stream loads' [extra sed]
set -e
name=$1; repl=$2
src=/work/exp/src
rm -rf $src && git -C /work/main worktree remove --force $src 2>/dev/null || true
git -C /work/main worktree add -q --detach $src HEAD
cd $src
if [ -n "$PATCH" ]; then python3 $PATCH; else python3 - "$repl" <<'PY'
import sys
p='ringbuf/batch.go'
s=open(p).read()
old='\t\t\tlines |= area.loadLines(p, total, walkStreamMax)\n'
assert old in s
s=s.replace(old, sys.argv[1]+'\n' if sys.argv[1] else '')
if 'unsafe.' in sys.argv[1] and '"unsafe"' not in s:
    s=s.replace('import (\n\t"iter"\n','import (\n\t"iter"\n\t"unsafe"\n')
open(p,'w').write(s)
PY
fi
go test -modfile=/work/main/.cache/bench.mod -c -o /work/exp/bin/rb-$name.test ./ringbuf
cd / && git -C /work/main worktree remove --force $src
echo built $name
