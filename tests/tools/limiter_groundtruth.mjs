// Ground truth from a real token-bucket library: the npm package `limiter` (4.1.0, MIT,
// https://www.npmjs.com/package/limiter), whose TokenBucket starts EMPTY (content = 0 when it is
// made) and refills continuously. Writes canonical NDJSON logs whose statuses are the library's
// own answers (200 = tryRemoveTokens(1) succeeded, 429 = it refused), for tests/model/
// tst_groundtruth_limiter.cpp. The library reads performance.now(); a virtual clock replaces it,
// so the run is deterministic and instant.
//
//   mkdir /tmp/lim && cd /tmp/lim && npm install limiter@4.1.0
//   NODE_PATH=/tmp/lim/node_modules node tests/tools/limiter_groundtruth.mjs tests/data/groundtruth
//
// Two logs, three clients each, one bucket per client (10 tokens, 2 per second):
//   limiter-starts-empty.ndjson     each client's bucket is made at its first request (empty)
//   limiter-mid-saturation.ndjson   buckets made full at t=0 (as the package's RateLimiter does),
//                                   the log kept from t=60 s only: it starts while the clients
//                                   are already throttled.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { TokenBucket } = require('limiter');

let now = 0; // virtual ms
performance.now = () => now;

// mulberry32: a small seeded generator, so the logs are reproducible.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const base = Date.UTC(2026, 1, 18, 22, 44, 0); // 2026-02-18T22:44:00Z
const clients = [
  // identity, mean gap between requests (ms), first request (ms), seed
  { identity: 'alpha', gapMs: 150, startMs: 0, seed: 7 },
  { identity: 'bravo', gapMs: 420, startMs: 2500, seed: 11 },
  { identity: 'charlie', gapMs: 330, startMs: 7300, seed: 13 },
];

function run({ fullAtStart, keepFromMs, durationMs }) {
  // Every client's arrival instants, merged in time order.
  const arrivals = [];
  for (const c of clients) {
    const r = rng(c.seed);
    let t = c.startMs;
    while (t < durationMs) {
      arrivals.push({ t, identity: c.identity });
      // Bursts and pauses: mostly short gaps, sometimes a long one.
      const u = r();
      t += u < 0.06 ? Math.round(1500 + r() * 3000) : Math.max(1, Math.round(-Math.log(1 - r()) * c.gapMs));
    }
  }
  arrivals.sort((a, b) => a.t - b.t || a.identity.localeCompare(b.identity));
  const buckets = new Map();
  if (fullAtStart) {
    now = 0;
    for (const c of clients) {
      const b = new TokenBucket({ bucketSize: 10, tokensPerInterval: 2, interval: 'second' });
      b.content = b.bucketSize;
      buckets.set(c.identity, b);
    }
  }
  const lines = [];
  let seq = 0;
  for (const a of arrivals) {
    now = a.t;
    let b = buckets.get(a.identity);
    if (!b) {
      b = new TokenBucket({ bucketSize: 10, tokensPerInterval: 2, interval: 'second' });
      buckets.set(a.identity, b);
    }
    const ok = b.tryRemoveTokens(1);
    if (a.t < keepFromMs)
      continue;
    lines.push(JSON.stringify({
      ts: new Date(base + a.t).toISOString(),
      service: 'tokenapi',
      identity: a.identity,
      method: 'GET',
      url: '/api/items',
      status: ok ? 200 : 429,
      requestId: `r${seq++}`,
    }));
  }
  return lines.join('\n') + '\n';
}

const out = process.argv[2] ?? '.';
writeFileSync(path.join(out, 'limiter-starts-empty.ndjson'),
  run({ fullAtStart: false, keepFromMs: 0, durationMs: 120000 }));
writeFileSync(path.join(out, 'limiter-mid-saturation.ndjson'),
  run({ fullAtStart: true, keepFromMs: 60000, durationMs: 180000 }));
