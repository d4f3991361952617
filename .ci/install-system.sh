#!/bin/sh
# Debian packages the real-VS-Code tests need: chromium for the workbench UI, libkrb5-dev to build
# code-server's kerberos module, openssl to make the test certificate authority of the TLS tests, a
# CJK font so the Chinese UI's screenshots show characters rather than empty boxes.
# Idempotent and non-interactive; talks to Debian apt only.
set -eu

packages="chromium libkrb5-dev openssl fonts-wqy-microhei"

missing=""
for pkg in $packages; do
  # dpkg -s also succeeds for removed packages that kept their config files.
  if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
    missing="$missing $pkg"
  fi
done

if [ -z "$missing" ]; then
  echo "install-system: already installed: $packages"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  as_root=""
elif command -v sudo >/dev/null 2>&1; then
  as_root="sudo"
else
  echo "install-system: need root (or sudo) to install:$missing" >&2
  exit 1
fi

echo "install-system: installing:$missing"
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
# shellcheck disable=SC2086 # one word per package
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
