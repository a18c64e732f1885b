#!/bin/sh
# The health check: a MongoDB `ping` over the wire (the image has no mongosh).
exec /usr/local/bin/ferretdb-embedded -ping mongodb://127.0.0.1:27017/ "$@"
