"""A prometheus_client collector for a swiftpush Client (needs `pip install prometheus_client`,
or the `prometheus` extra):

    from prometheus_client import REGISTRY, start_http_server
    from swiftpush.prometheus import ClientCollector
    REGISTRY.register(ClientCollector(client))
    start_http_server(9100)

Each scrape reads Client.metrics_text() (push_client_metrics_text): outcomes by reason, writes,
retries, GOAWAYs, connections, queue gauges and the answer-latency histogram. A closed client
keeps reporting its final counts while it exists.
"""

from __future__ import annotations

from typing import Iterator

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from ._errors import SwiftPushError
from .client import Client


class ClientCollector:
    """Collects one Client's metrics at each scrape."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def collect(self) -> Iterator[Metric]:
        try:
            text = self._client.metrics_text()
        except SwiftPushError:  # the library refused (freed client): nothing to report
            return
        yield from text_string_to_metric_families(text)
