"""Checking an exported nginx `map` block two ways: Debian's own nginx (`nginx -t` on a config that
includes it) and a strict reader of the map grammar here, which also gives back the pairs it holds.

nginx comes from the distribution's packages: installed on first use where the tests run as root
with apt-get (as infra/bootstrap.sh installs ffmpeg, so .ci/run gets it too). Where it cannot be
installed the strict reader is the check, and `nginx_or_none` says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path


@functools.cache
def nginx_or_none() -> str | None:
    """The nginx binary, installed from Debian's packages if need be; None where that cannot be done."""
    found = shutil.which("nginx") or (Path("/usr/sbin/nginx").exists() and "/usr/sbin/nginx")
    if found:
        return str(found)
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], capture_output=True, timeout=300, env=env)
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "nginx"]
    subprocess.run(install, capture_output=True, timeout=600, env=env)
    found = shutil.which("nginx") or (Path("/usr/sbin/nginx").exists() and "/usr/sbin/nginx")
    return str(found) if found else None


def nginx_test(map_file: Path, workdir: Path) -> subprocess.CompletedProcess:
    """`nginx -t` on a minimal configuration that includes `map_file` in http {} and uses its variable."""
    nginx = nginx_or_none()
    assert nginx is not None
    (workdir / "logs").mkdir(parents=True, exist_ok=True)
    conf = workdir / "nginx.conf"
    conf.write_text(
        f"error_log {workdir}/logs/error.log;\npid {workdir}/nginx.pid;\nevents {{}}\n"
        f"http {{\n  access_log off;\n  include {map_file};\n"
        "  server {\n    listen 127.0.0.1:8999;\n"
        "    if ($migrator_new_url) { return 301 $migrator_new_url; }\n  }\n}\n"
    )
    return subprocess.run([nginx, "-t", "-p", str(workdir), "-c", str(conf)], capture_output=True, text=True)


def read_map(text: str) -> tuple[str, str, dict[str, str]]:
    """(source, variable, {key: value}) of the one `map` block in `text`, read strictly: comments and
    blank lines aside, the two hash-size directives, `map <source> $<var> {`, then `"key" "value";`
    lines (only backslash and quote escaped, no `$` in a value), one `default "";`, and `}`.
    Anything else raises AssertionError."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    while lines and lines[0].startswith(("map_hash_max_size ", "map_hash_bucket_size ")):
        name, number = lines.pop(0).rstrip(";").split()
        assert number.isdigit(), name
    head, *body, tail = lines
    words = head.split()
    assert len(words) == 4 and words[0] == "map" and words[2].startswith("$") and words[3] == "{", head
    assert tail == "}", tail
    pairs: dict[str, str] = {}
    defaults = 0
    for line in body:
        assert line.startswith("    ") and line.endswith(";"), line
        tokens, rest = [], line.strip()[:-1]
        while rest:
            if rest.startswith("default"):
                tokens.append(None)
                rest = rest[len("default") :].lstrip()
                continue
            assert rest[0] == '"', line
            value, i = [], 1
            while rest[i] != '"':
                if rest[i] == "\\":
                    assert rest[i + 1] in '\\"', line
                    i += 1
                value.append(rest[i])
                i += 1
            tokens.append("".join(value))
            rest = rest[i + 1 :].lstrip()
        assert len(tokens) == 2, line
        key, value = tokens
        if key is None:
            defaults += 1
            assert value == "", line
            continue
        assert "$" not in value and key not in pairs, line
        assert all(c.isprintable() and c.isascii() for c in key + value), line
        pairs[key] = value
    assert defaults == 1
    return words[1], words[2][1:], pairs
