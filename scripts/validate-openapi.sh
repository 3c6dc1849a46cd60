#!/usr/bin/env bash
# Validates Docs/openapi.yaml against the OpenAPI 3.1 specification.
#
# Usage: scripts/validate-openapi.sh [path/to/openapi.yaml]
#
# Installs openapi-spec-validator with pip when it is missing. Exits non-zero when the file is invalid.
set -euo pipefail

# A path given as an argument is taken relative to the caller's directory; the default, to the repository.
if [[ $# -gt 0 ]]; then
    spec="$1"
    [[ "$spec" == /* ]] || spec="$PWD/$spec"
else
    spec="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/Docs/openapi.yaml"
fi

if ! command -v python3 >/dev/null 2>&1; then
    echo "validate-openapi: python3 is not on PATH" >&2
    exit 1
fi

if ! python3 -c 'import openapi_spec_validator' >/dev/null 2>&1; then
    echo "validate-openapi: installing openapi-spec-validator (pip)"
    pip install --quiet openapi-spec-validator
fi

python3 - "$spec" <<'PY'
import sys

from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

path = sys.argv[1]
try:
    validate(read_from_filename(path)[0])
except Exception as error:  # the validator's errors, and unreadable or malformed YAML
    print(f"validate-openapi: {path} is not valid OpenAPI:\n{error}", file=sys.stderr)
    sys.exit(1)
print(f"validate-openapi: {path} is valid OpenAPI")
PY
