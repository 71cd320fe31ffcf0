// Exports a few HTTP client spans, the way an instrumented Graph client would produce them, to
// the OTLP/HTTP endpoint given as the first argument (http://127.0.0.1:PORT/v1/traces).
// Exit code 0 only when the exporter reports success.
'use strict';

const { SpanKind, SpanStatusCode } = require('@opentelemetry/api');
const { BasicTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');
const { Resource } = require('@opentelemetry/resources');

const endpoint = process.argv[2];
if (!endpoint || !endpoint.startsWith('http://127.0.0.1:')) {
  console.error('usage: node export-spans.js http://127.0.0.1:PORT/v1/traces');
  process.exit(2);
}

const exporter = new OTLPTraceExporter({ url: endpoint, timeoutMillis: 10000 });
// Wrap export() to learn whether the listener accepted the spans.
let failures = 0;
const originalExport = exporter.export.bind(exporter);
exporter.export = (spans, done) => originalExport(spans, (result) => {
  if (result.code !== 0) {
    failures += 1;
    console.error('export failed:', result.error && result.error.message);
  }
  done(result);
});

const provider = new BasicTracerProvider({
  resource: new Resource({ 'service.name': 'note-bridge', 'service.version': '2.3.1' }),
});
provider.addSpanProcessor(new SimpleSpanProcessor(exporter));
const tracer = provider.getTracer('throttlescope-otel-test', '1.0.0');

// 2026-02-18T22:44:09.512Z, then 250 ms apart.
const base = Date.UTC(2026, 1, 18, 22, 44, 9, 512);
const calls = [
  { status: 200, url: 'https://graph.microsoft.com/v1.0/me/onenote/pages?$top=20',
    headers: { 'x-ms-throttle-limit-percentage': ['0.9'] } },
  { status: 429, url: 'https://graph.microsoft.com/v1.0/me/onenote/pages/1-abc/content',
    headers: { 'retry-after': ['2.128'], 'x-ms-throttle-scope': ['Application'] } },
  { status: 200, url: 'https://graph.microsoft.com/v1.0/me/onenote/pages/1-abc/content',
    headers: {}, attempt: '1' },
];

calls.forEach((call, i) => {
  const start = base + i * 250;
  const span = tracer.startSpan('GET', {
    kind: SpanKind.CLIENT,
    startTime: start,
    attributes: {
      'http.request.method': 'GET',
      'url.full': call.url,
      'http.response.status_code': call.status,
      'enduser.id': 'alice@contoso.com',
      ...Object.fromEntries(Object.entries(call.headers)
        .map(([name, value]) => ['http.response.header.' + name, value])),
      ...(call.attempt ? { 'http.request.header.retry-attempt': [call.attempt] } : {}),
    },
  });
  if (call.status >= 400)
    span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(start + 120 + i);
});

provider.forceFlush()
  .then(() => provider.shutdown())
  .then(() => {
    if (failures > 0)
      process.exit(1);
    console.log('exported ' + calls.length + ' spans');
  })
  .catch((error) => {
    console.error('export failed:', error);
    process.exit(1);
  });
