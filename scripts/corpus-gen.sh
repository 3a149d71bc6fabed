#!/usr/bin/env bash
# Sourced by the GPU machine's benchmark scripts: `corpus_gen NAME OUT` writes the matrix NAME of
# bench/corpus.tsv (seed 1) to OUT with `$ST gen` (ST: the sparsetool binary, default /tmp/b/sparsetool;
# gen's report on stdout); a name the corpus does not list returns 1 with a line on stderr, a failed
# generation gen's status.
corpus_gen() {
    local name=$1 out=$2 kind rows cols k alpha maxlen
    read -r _ kind rows cols k alpha maxlen < <(awk -v n="$name" '$1 == n' bench/corpus.tsv) || true
    if [ -z "${kind:-}" ]; then echo "$name: not in bench/corpus.tsv" >&2; return 1; fi
    local args=("$kind" --rows "$rows" --nnz-per-row "$k" --seed 1)
    [ "$cols" != - ] && args+=(--cols "$cols")
    [ "$alpha" != - ] && args+=(--alpha "$alpha")
    [ "$maxlen" != - ] && args+=(--max-row-len "$maxlen")
    "${ST:-/tmp/b/sparsetool}" gen "${args[@]}" -o "$out" --force
}
