#!/usr/bin/env bash
# Attention variants compiled by two builds of ism, side by side on the
# H200: every runner package in dist/ (ism-runner-COMMIT.tar.xz) is
# unpacked to /tmp/r-COMMIT, and attention_variants.py times each variant
# with each build in the same interleaved rounds (reported as
# COMMIT:VARIANT). NEW (a commit prefix, required) names the build under
# test: the gpu step runs its GPU lit subset, check runs
# attention_variants.py's --check (1000 and 4097 tokens, causal and not)
# and san compute-sanitizer's memcheck, racecheck and synccheck, with it
# only.
#   NEW=c0af1d0 OUT=/tmp/out bash bench/experiments/attention_builds_h200.sh \
#       [gpu|check|san|bench]...
# VARIANTS: attention_variants.py's specs (d,bm,bn,warps,stages,pipelined
# [,attr=value...]); ROUNDS, REPS: its --rounds and --reps.
set -uo pipefail
: "${OUT:?set OUT to a directory for the logs}"
: "${NEW:?set NEW to the commit of the build under test}"
mkdir -p "$OUT"
builds=() new=""
for pkg in dist/ism-runner-*.tar.xz; do
  c=$(basename "$pkg" .tar.xz); c=${c#ism-runner-}; c=${c:0:7}
  mkdir -p "/tmp/r-$c"
  [ -x "/tmp/r-$c/ism-runner/bin/ism-run" ] || tar xJf "$pkg" -C "/tmp/r-$c"
  builds+=(--ism-run "$c=/tmp/r-$c/ism-runner/bin/ism-run")
  case $c in "${NEW:0:7}"*) new=/tmp/r-$c ;; esac
done
[ -n "$new" ] || { echo "no runner package in dist/ for NEW=$NEW" >&2; exit 2; }
export ISM_CACHE_DIR=/tmp/ism-cache
read -r -a variants <<< "${VARIANTS:-128,128,128,8,2,1 128,128,128,8,2,1,ping_pong=true 128,128,128,8,2,0 64,128,128,8,2,1 64,128,128,8,2,0}"
for s in ${@:-gpu check bench}; do
  case $s in
    gpu)
      "$new/ism-runner/scripts/gpu-tests.sh" > "$OUT/gpu-tests.log" 2>&1
      echo "gpu-tests rc=$?"
      grep -E "^(FAIL|  Passed|  Failed|  Unsupported)" "$OUT/gpu-tests.log" ;;
    check|san)
      step=$s; [ "$s" = san ] && step=sanitize
      python3 bench/experiments/attention_variants.py \
        --ism-run "$new/ism-runner/bin/ism-run" --out "$OUT/$s" \
        --steps "$step" "${variants[@]}" > "$OUT/$s.log" 2>&1
      echo "$s rc=$?"; grep -c ": ok" "$OUT/$s.log"; grep FAILED "$OUT/$s.log" ;;
    bench)
      python3 bench/experiments/attention_variants.py "${builds[@]}" \
        --out "$OUT/bench" --steps bench --rounds "${ROUNDS:-3}" \
        --reps "${REPS:-50}" "${variants[@]}" > "$OUT/bench.log" 2>&1
      echo "bench rc=$?"; sed -n '/^variant/,$p' "$OUT/bench.log" ;;
    *) echo "unknown step '$s' (gpu, check, san or bench)" >&2; exit 2 ;;
  esac
done
