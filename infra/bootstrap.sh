# Sourced by infra/demo and infra/test: makes .venv (Python 3.12) with the project and
# its dev extras installed, reinstalling only when pyproject.toml changes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

find_python312() {
  # pyenv's shim may be on PATH without a 3.12 selected, so every candidate is tried.
  local candidate
  for candidate in "$(command -v python3.12 || true)" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3.12 \
                   /usr/local/bin/python3.12 /usr/bin/python3.12; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && "$candidate" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null; then
      echo "$candidate"; return
    fi
  done
  echo "error: python3.12 not found (the Lambda runtime is python3.12); install it, e.g. 'pyenv install 3.12'" >&2
  return 1
}

PY312="$(find_python312)"
STAMP=".venv/.installed-$(sha256sum pyproject.toml functions/requirements.txt | sha256sum | cut -c1-16)"
if [ ! -f "$STAMP" ]; then
  echo "[bootstrap] preparing .venv with $PY312" >&2
  "$PY312" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev]' 2>&1 | grep -v '^WARNING: Location' >&2 || true
  .venv/bin/python -c "import migrator, boto3, requests, pytest" >&2
  rm -f .venv/.installed-*
  touch "$STAMP"
fi
export PATH="$ROOT/.venv/bin:$PATH"

# The probe (migrator probe, and its tests) runs Debian's ffprobe; install it once where apt can.
if ! command -v ffprobe >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[bootstrap] installing ffmpeg (ffprobe) from Debian" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg) \
      >/dev/null 2>&1 || echo "[bootstrap] warning: could not install ffmpeg" >&2
  else
    echo "[bootstrap] warning: ffprobe not found; install Debian's ffmpeg for 'migrator probe'" >&2
  fi
fi
