# Sourced by the tools/*.sh scripts (after they define log()): install the
# Debian packages given that are not installed yet. Needs root for apt-get;
# otherwise says which packages are missing and returns 1. Returns 2 when
# apt-get fails.
apt_install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ]; then
    log "apt-get install ${missing[*]}"
    { apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; } ||
      { log "apt-get could not install ${missing[*]}"; return 2; }
  else
    log "not root: please install ${missing[*]} with apt-get"
    return 1
  fi
}
