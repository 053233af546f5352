"""An OTLP/HTTP receiver for the telemetry tests: spans and metrics sent as protobuf to
/v1/traces and /v1/metrics, decoded with the official `opentelemetry-proto` package and written
to stdout as one JSON object per line. The first line is {"port": N} (it binds 127.0.0.1:0).

With --refuse, every export is answered 503 (a collector that is up but will not take them).
With --sink, every export is taken (200) and nothing is decoded or printed (for benchmarks)."""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

REFUSE = "--refuse" in sys.argv
SINK = "--sink" in sys.argv


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value_of(v) for v in any_value.array_value.values]
    return getattr(any_value, kind)


def attributes(pairs):
    return {kv.key: value_of(kv.value) for kv in pairs}


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body=b""):
        self.send_response(status)
        if status == 200:
            self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if SINK:
            return self.reply(200)
        if REFUSE:
            emit({"refused": self.path})
            return self.reply(503)
        if self.path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = attributes(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        emit({
                            "span": span.name,
                            "service": resource.get("service.name"),
                            "scope": scope_spans.scope.name,
                            "traceId": span.trace_id.hex(),
                            "spanId": span.span_id.hex(),
                            "parentSpanId": span.parent_span_id.hex(),
                            "kind": span.kind,
                            "attributes": attributes(span.attributes),
                            "status": {"code": span.status.code, "message": span.status.message},
                            "links": [{"traceId": l.trace_id.hex(), "spanId": l.span_id.hex()} for l in span.links],
                            "contentType": self.headers.get("content-type"),
                        })
            reply = ExportTraceServiceResponse().SerializeToString()
        elif self.path == "/v1/metrics":
            request = ExportMetricsServiceRequest.FromString(body)
            for resource_metrics in request.resource_metrics:
                resource = attributes(resource_metrics.resource.attributes)
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        points = []
                        if metric.WhichOneof("data") == "histogram":
                            for point in metric.histogram.data_points:
                                points.append({
                                    "attributes": attributes(point.attributes),
                                    "count": point.count,
                                    "bounds": list(point.explicit_bounds),
                                })
                        emit({"metric": metric.name, "unit": metric.unit, "service": resource.get("service.name"), "points": points})
            reply = ExportMetricsServiceResponse().SerializeToString()
        else:
            return self.reply(404)
        self.reply(200, reply)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
emit({"port": server.server_address[1]})
server.serve_forever()
