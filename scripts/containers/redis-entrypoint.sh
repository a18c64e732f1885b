#!/bin/sh
# As the official image does: without a config file Redis listens on every interface but, in
# protected mode, refuses every client that is not on loopback, and a published port arrives from
# the bridge. The container's network is the protection here.
set -eu
if [ "${1:-}" = redis-server ]; then
  shift
  case "${1:-}" in
    # redis-server takes a config file only as its first argument
    '' | -*) set -- redis-server --protected-mode no "$@" ;;
    *)
      conf="$1"
      shift
      set -- redis-server "$conf" --protected-mode no "$@"
      ;;
  esac
fi
exec "$@"
