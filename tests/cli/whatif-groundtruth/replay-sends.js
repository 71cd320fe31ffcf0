// Feeds the sends `throttlescope whatif --out` wrote to a real rate-limit library on a virtual
// clock, one limiter per identity made at the identity's first send, and prints what the
// library answered beside what whatif predicted (used by tests/cli/tst_whatif_groundtruth.cpp).
//
//   node replay-sends.js LIBRARY SENDS.ndjson
//
// LIBRARY:
//   flexible      rate-limiter-flexible RateLimiterMemory: 20 points per 10 s, a fixed window
//                 opened by the first consume after the previous one expired; every consume
//                 counts, refused or not; a request's points are its `credits` (POST 3, else 1)
//   tokenbucket   limiter TokenBucket: 8 tokens, 1 token per 64 ms, starts empty
//   ratelimiter   limiter RateLimiter: 10 per 640 ms interval (a window opened by the first
//                 request after the last one ended) on top of a full token bucket of 10 that
//                 refills 1 per 64 ms
//
// Output (JSON): {"IDENTITY": {"sends": n, "refused": n, "predicted": n, "mismatches": [...]}}
// where a mismatch is a send whose status or Retry-After differs from the library's answer.
// Rates are chosen so the library's floating-point arithmetic is exact (1/64 token per ms).
'use strict';
const fs = require('node:fs');

let now = 0; // virtual ms
Date.now = () => now;
performance.now = () => now;

const { RateLimiterMemory } = require('rate-limiter-flexible');
const { TokenBucket, RateLimiter } = require('limiter');

const library = process.argv[2];
const lines = fs.readFileSync(process.argv[3], 'utf8').split('\n').filter((l) => l.length > 0);

// One limiter per identity; answer(send) -> {ok, retryAfterMs (or null when not told)}.
function makeLimiter() {
  switch (library) {
    case 'flexible': {
      const limiter = new RateLimiterMemory({ points: 20, duration: 10 });
      return async (send) => {
        const points = send.method === 'POST' ? 3 : 1;
        try {
          await limiter.consume(send.identity, points);
          return { ok: true, retryAfterMs: null };
        } catch (res) {
          return { ok: false, retryAfterMs: res.msBeforeNext };
        }
      };
    }
    case 'tokenbucket': {
      const bucket = new TokenBucket({ bucketSize: 8, tokensPerInterval: 1, interval: 64 });
      return async () => {
        const ok = bucket.tryRemoveTokens(1);
        return { ok, retryAfterMs: ok ? null : bucket.getWaitTime(1) };
      };
    }
    case 'ratelimiter': {
      const limiter = new RateLimiter({ tokensPerInterval: 10, interval: 640 });
      return async () => {
        const ok = limiter.tryRemoveTokens(1);
        return { ok, retryAfterMs: ok ? null : limiter.getWaitTime(1) };
      };
    }
    default:
      throw new Error(`unknown library ${library}`);
  }
}

async function main() {
  const limiters = new Map();
  const result = {};
  for (const line of lines) {
    const send = JSON.parse(line);
    now = Date.parse(send.ts);
    if (!limiters.has(send.identity))
      limiters.set(send.identity, makeLimiter());
    const answer = await limiters.get(send.identity)(send);
    const entry = (result[send.identity] ??= { sends: 0, refused: 0, predicted: 0, mismatches: [] });
    entry.sends += 1;
    entry.refused += answer.ok ? 0 : 1;
    const predictedRefusal = send.status === 429;
    entry.predicted += predictedRefusal ? 1 : 0;
    const predictedWaitMs = predictedRefusal ? Math.round(parseFloat(send.retryAfter) * 1000) : null;
    if (predictedRefusal === answer.ok ||
        (!answer.ok && answer.retryAfterMs !== null && predictedWaitMs !== answer.retryAfterMs)) {
      if (entry.mismatches.length < 10)
        entry.mismatches.push({ ts: send.ts, status: send.status, retryAfter: send.retryAfter,
                                libraryOk: answer.ok, libraryRetryAfterMs: answer.retryAfterMs });
    }
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + '\n');
  process.exit(1);
});
