"""schemathesis against the API's own OpenAPI schema: no input may cause a server error.

Runs the app in-process (ASGI) on the session's real broker and graph, with an API key
configured: every generated request is sent with the key (all checks: status codes,
content types, response schemas; and no 5xx), and once without it (401, never a 5xx).
The lead re-runs it after merging the query service (issue 17).
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from serving.app import create_app
from tests.conftest import Isolated

pytestmark = pytest.mark.integration
KEY = "schemathesis-test-key"


@pytest.fixture
def api_schema(iso: Isolated) -> object:
    app = create_app(iso.settings.with_overrides(api={"api_keys": [KEY]}))
    return schemathesis.openapi.from_asgi("/openapi.json", app)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
def test_no_server_errors(case: schemathesis.Case) -> None:
    case.call_and_validate(headers={"X-API-Key": KEY})
    anonymous = case.call(headers={"X-API-Key": "wrong-" + KEY})
    assert anonymous.status_code < 500
    if case.path.startswith(("/api/", "/ingest/")):
        assert anonymous.status_code == 401
