#!/usr/bin/env bash
# Installs the Debian packages PushRelay needs to build and test, if any are missing.
#
# Usage: scripts/bootstrap.sh [extra-package ...]     e.g. scripts/bootstrap.sh postgresql
#
# Idempotent: when every package is already installed it changes nothing and needs no privileges. Otherwise it runs
# apt-get as root, through sudo when not root. The Swift toolchain itself is not installed here.
#
# libcurl 8: Debian 12 (bookworm) ships libcurl 7.88.1, whose HTTP/2 handling has known faults (reused h2c
# connections, over-connecting, CURLE_OK for reset streams). On bookworm, when the installed libcurl4-openssl-dev is
# older than 8, the script adds the bookworm-backports suite on the mirror the system already uses (unless some
# sources file already names bookworm-backports) and installs libcurl4 and libcurl4-openssl-dev from it. Nothing is
# downloaded from anywhere but that Debian mirror.
#
# BOOTSTRAP_APT_ETC (default /etc/apt) names the apt configuration directory; it exists for testing the script.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

apt_etc="${BOOTSTRAP_APT_ETC:-/etc/apt}"
backports_suite=bookworm-backports
backports_file="$apt_etc/sources.list.d/pushrelay-backports.sources"
default_keyring=/usr/share/keyrings/debian-archive-keyring.gpg

# libcurl (with nghttp2 for HTTP/2 and OpenSSL for TLS) is the libcurl transport, linked through CCurl; nghttp2 and
# OpenSSL are also the default HTTP/2 transport; SQLite is the embedded store, linked through GRDB; zlib inflates
# gzipped request bodies (the Expo SDKs send them); jemalloc is the executables' allocator (Package.swift).
packages=(libcurl4-openssl-dev libnghttp2-dev libssl-dev libsqlite3-dev zlib1g-dev libjemalloc-dev "$@")
# Installed from bookworm-backports on Debian 12 when the installed libcurl is older than 8.
curl_packages=(libcurl4-openssl-dev libcurl4)

if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
    echo "bootstrap: dpkg/apt-get not found; this script supports Debian and Ubuntu." >&2
    echo "bootstrap: install these packages (or your system's equivalents) yourself: ${packages[*]} (libcurl 8 or newer)" >&2
    exit 1
fi

# MARK: - What is missing

is_installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

# Whether the installed libcurl4-openssl-dev (if any) is libcurl 8 or newer.
libcurl_is_8() {
    local version
    is_installed libcurl4-openssl-dev || return 1
    version="$(dpkg-query -W -f='${Version}' libcurl4-openssl-dev 2>/dev/null || true)"
    [ -n "$version" ] && dpkg --compare-versions "$version" ge 8
}

is_bookworm() {
    [ -r /etc/os-release ] || return 1
    # shellcheck disable=SC1091
    (. /etc/os-release && [ "${ID:-}" = debian ] && [ "${VERSION_CODENAME:-}" = bookworm ])
}

missing=()
for package in "${packages[@]}"; do
    is_installed "$package" || missing+=("$package")
done

from_backports=false
if is_bookworm && ! libcurl_is_8; then
    from_backports=true
    # The libcurl packages come from backports, in their own apt-get call.
    rest=()
    for package in ${missing[@]+"${missing[@]}"}; do
        case " ${curl_packages[*]} " in *" $package "*) ;; *) rest+=("$package") ;; esac
    done
    missing=(${rest[@]+"${rest[@]}"})
elif ! libcurl_is_8 && is_installed libcurl4-openssl-dev; then
    echo "bootstrap: warning: the installed libcurl is older than 8; PushRelay's libcurl transport expects libcurl 8." >&2
fi

if [ "${#missing[@]}" -eq 0 ] && [ "$from_backports" = false ]; then
    echo "bootstrap: system packages already installed: ${packages[*]} ($(dpkg-query -W -f='libcurl ${Version}' libcurl4-openssl-dev))"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
else
    [ "${#missing[@]}" -eq 0 ] || echo "bootstrap: missing packages: ${missing[*]}" >&2
    [ "$from_backports" = false ] || echo "bootstrap: libcurl 8 (${curl_packages[*]}) is needed from $backports_suite" >&2
    echo "bootstrap: installing them needs root; run this script as root or install sudo." >&2
    exit 1
fi

# MARK: - bookworm-backports on the system's own mirror

# Whether an enabled sources file already names the backports suite (in a line that is not a comment).
has_backports_source() {
    local file
    for file in "$apt_etc/sources.list" "$apt_etc"/sources.list.d/*.list "$apt_etc"/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        if grep -Eq "^[^#]*(^|[[:space:]])$backports_suite([[:space:]]|$)" "$file"; then return 0; fi
    done
    return 1
}

# Prints "<URI> <keyring>" for the Debian mirror that serves bookworm itself, from the deb822 sources (Debian 12's
# default) or else the one-line sources.list; the keyring is empty when the entry names none.
bookworm_mirror() {
    local file
    for file in "$apt_etc"/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        # One deb822 stanza per paragraph: the first enabled "deb" stanza whose Suites include plain bookworm.
        awk '
            function flush() {
                if (uri != "" && suites && types && enabled) { print uri, keyring; found = 1; exit }
                uri = ""; keyring = ""; suites = 0; types = 0; enabled = 1
            }
            BEGIN { enabled = 1 }
            /^[[:space:]]*$/ { flush(); next }
            /^#/ { next }
            tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") types = 1 }
            tolower($1) == "uris:" { uri = $2 }
            tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == "bookworm") suites = 1 }
            tolower($1) == "enabled:" && tolower($2) == "no" { enabled = 0 }
            tolower($1) == "signed-by:" && $2 ~ /^\// { keyring = $2 }
            END { if (!found) flush() }
        ' "$file" | head -n 1 | grep . && return 0
    done
    for file in "$apt_etc/sources.list" "$apt_etc"/sources.list.d/*.list; do
        [ -f "$file" ] || continue
        # deb [signed-by=/path other=options] URI bookworm components...
        awk '
            $1 != "deb" { next }
            {
                keyring = ""; i = 2
                if ($2 ~ /^\[/) {
                    for (; i <= NF; i++) {
                        if ($i ~ /signed-by=/) { keyring = $i; sub(/.*signed-by=/, "", keyring); sub(/\]$/, "", keyring) }
                        if ($i ~ /\]$/) { i++; break }
                    }
                }
                if ($(i + 1) == "bookworm") { print $i, keyring; exit }
            }
        ' "$file" | head -n 1 | grep . && return 0
    done
    return 1
}

add_backports_source() {
    local mirror uri keyring
    if ! mirror="$(bookworm_mirror)"; then
        echo "bootstrap: no apt source for bookworm found in $apt_etc; add $backports_suite yourself" >&2
        exit 1
    fi
    read -r uri keyring <<<"$mirror"
    keyring="${keyring:-$default_keyring}"
    echo "bootstrap: adding $backports_suite from $uri to $backports_file"
    printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' "$uri" "$backports_suite" "$keyring" |
        ${as_root[@]+"${as_root[@]}"} tee "$backports_file" >/dev/null
}

# MARK: - Install

if [ "$from_backports" = true ] && ! has_backports_source; then
    add_backports_source
fi

[ "${#missing[@]}" -eq 0 ] || echo "bootstrap: installing missing system packages: ${missing[*]}"
${as_root[@]+"${as_root[@]}"} apt-get update
if [ "${#missing[@]}" -gt 0 ]; then
    ${as_root[@]+"${as_root[@]}"} apt-get install -y --no-install-recommends "${missing[@]}"
fi
if [ "$from_backports" = true ]; then
    echo "bootstrap: installing libcurl 8 from $backports_suite: ${curl_packages[*]}"
    # Named singly (package/suite): `-t` would take every upgradable dependency from backports too.
    ${as_root[@]+"${as_root[@]}"} apt-get install -y --no-install-recommends "${curl_packages[@]/%//$backports_suite}"
fi
echo "bootstrap: done."
