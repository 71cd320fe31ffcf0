// Ground truth from real circuit-breaker libraries: the npm packages `cockatiel` 4.0.0 (MIT,
// Connor Peet; Polly-inspired) and `opossum` 10.0.0 (Apache-2.0, Red Hat; Hystrix-like), driven
// on a fake clock (`@sinonjs/fake-timers` 15.5.0, BSD-3-Clause) with seeded traffic and outages.
// For tests/model/tst_breakers_groundtruth.cpp. Each fixture is two files:
//
//   breaker-NAME.ndjson          the canonical log of the calls the clients made: the service's
//                                answer (200 / 404 success, 500 / 503 / 429 / 408 failure), or
//                                "refused": "breaker" for a call the library refused itself
//                                (cockatiel's BrokenCircuitError, opossum's EOPENBREAKER reject)
//   breaker-NAME.expected.json   the library's options (as a `breaker` object of docs/policy.md)
//                                and every transition the library's own events reported
//                                (cockatiel onStateChange, opossum open / halfOpen / close), at
//                                the fake clock's millisecond
//
// One breaker per client (as a service client holds one per downstream), created at the
// client's first call; calls are answered in the millisecond they are made, one at a time, so
// the order the library saw is the log's order. The service's answer to each call is drawn
// before the run from the client's seeded generator and the outage schedule, so it does not
// depend on whether the breaker let the call through.
//
//   mkdir /tmp/brk && cd /tmp/brk && \
//     npm install cockatiel@4.0.0 opossum@10.0.0 @sinonjs/fake-timers@15.5.0
//   NODE_PATH=/tmp/brk/node_modules node tests/tools/breaker_groundtruth.mjs tests/data/groundtruth
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
// cockatiel is an ES module only: imported by the path NODE_PATH resolves it to.
const importPackage = async (name) => import(pathToFileURL(require.resolve(name)).href);
const FakeTimers = require('@sinonjs/fake-timers');
const cockatiel = await importPackage('cockatiel');
const CircuitBreaker = require('opossum');

const versions = {
  cockatiel: require('cockatiel/package.json').version,
  opossum: require('opossum/package.json').version,
  '@sinonjs/fake-timers': require('@sinonjs/fake-timers/package.json').version,
};

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
const service = 'orders';
const failureStatuses = [503, 503, 500, 429, 408];
const successStatuses = [200, 200, 200, 200, 404];

// The calls of every client, merged in time order, each with the answer the service gives if
// the call reaches it. traffic.clients: identity, mean gap (ms), first call (ms), seed;
// traffic.idle: the chance that a gap is a pause of pauseMs [min, max] instead.
function arrivals(traffic, outages, durationMs) {
  const failureChance = (t) => {
    for (const o of outages) {
      if (t >= o.fromMs && t < o.toMs) return o.failure;
    }
    return traffic.baseFailure;
  };
  const calls = [];
  for (const c of traffic.clients) {
    const r = rng(c.seed);
    for (let t = c.startMs; t < durationMs;) {
      const failed = r() < failureChance(t);
      const status = failed ? failureStatuses[Math.floor(r() * failureStatuses.length)]
                            : successStatuses[Math.floor(r() * successStatuses.length)];
      calls.push({ t, identity: c.identity, failed, status });
      const u = r();
      const [pauseMin, pauseMax] = traffic.pauseMs;
      t += u < traffic.idle ? Math.round(pauseMin + r() * (pauseMax - pauseMin))
                            : Math.max(1, Math.round(-Math.log(1 - r()) * c.gapMs));
    }
  }
  calls.sort((a, b) => a.t - b.t || a.identity.localeCompare(b.identity));
  return calls;
}

// The transitions a library reported, named as the Breakers page names states.
class Recorder {
  constructor(clock) {
    this.clock = clock;
    this.transitions = [];
    this.states = new Map();
  }
  record(scope, to) {
    const from = this.states.get(scope) ?? 'closed';
    if (from === to) return;
    this.states.set(scope, to);
    this.transitions.push({ at: new Date(this.clock.now).toISOString(), scope, from, to });
  }
}

// cockatiel: circuitBreaker(handleAll, {halfOpenAfter, breaker}) per client.
function cockatielBreaker(options, recorder, scope) {
  const { breaker: kind, halfOpenAfter, ...rest } = options;
  let breaker;
  if (kind === 'ConsecutiveBreaker') breaker = new cockatiel.ConsecutiveBreaker(rest.threshold);
  else if (kind === 'CountBreaker') breaker = new cockatiel.CountBreaker(rest);
  else breaker = new cockatiel.SamplingBreaker(rest);
  const policy = cockatiel.circuitBreaker(cockatiel.handleAll, { halfOpenAfter, breaker });
  const names = { [cockatiel.CircuitState.Closed]: 'closed', [cockatiel.CircuitState.Open]: 'open',
                  [cockatiel.CircuitState.HalfOpen]: 'half-open' };
  policy.onStateChange((state) => recorder.record(scope, names[state]));
  return {
    call: async (answer) => {
      try {
        await policy.execute(answer);
        return 'answered';
      } catch (error) {
        return error instanceof cockatiel.BrokenCircuitError ? 'refused' : 'answered';
      }
    },
  };
}

// opossum: new CircuitBreaker(action, options) per client; the action answers as the service.
function opossumBreaker(options, recorder, scope) {
  const breaker = new CircuitBreaker((answer) => answer(), { ...options, name: scope });
  breaker.on('open', () => recorder.record(scope, 'open'));
  breaker.on('halfOpen', () => recorder.record(scope, 'half-open'));
  breaker.on('close', () => recorder.record(scope, 'closed'));
  return {
    call: async (answer) => {
      try {
        await breaker.fire(answer);
        return 'answered';
      } catch (error) {
        return error.code === 'EOPENBREAKER' ? 'refused' : 'answered';
      }
    },
  };
}

async function run(fixture) {
  const clock = FakeTimers.install({
    now: base,
    toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
  });
  const recorder = new Recorder(clock);
  const make = fixture.library === 'cockatiel' ? cockatielBreaker : opossumBreaker;
  const breakers = new Map();
  const lines = [];
  let seq = 0;
  let refused = 0;
  for (const a of arrivals(fixture.traffic, fixture.outages, fixture.durationMs)) {
    clock.tick(base + a.t - clock.now); // the library's timers up to this call run first
    const scope = `${service}:${a.identity}`;
    if (!breakers.has(scope)) breakers.set(scope, make(fixture.options, recorder, scope));
    const answer = async () => {
      if (a.failed) throw Object.assign(new Error(`HTTP ${a.status}`), { status: a.status });
      return a.status;
    };
    const outcome = await breakers.get(scope).call(answer);
    const line = { ts: new Date(clock.now).toISOString(), service, identity: a.identity,
                   method: 'GET', url: '/api/orders' };
    if (outcome === 'refused') {
      line.refused = 'breaker';
      ++refused;
    } else {
      line.status = a.status;
    }
    line.requestId = `r${seq++}`;
    lines.push(JSON.stringify(line));
  }
  clock.uninstall();
  const expected = {
    generator: 'tests/tools/breaker_groundtruth.mjs',
    library: fixture.library,
    versions,
    log: `breaker-${fixture.name}.ndjson`,
    what: fixture.what,
    breaker: { preset: fixture.library, ...fixture.options },
    calls: lines.length,
    refused,
    transitions: recorder.transitions,
  };
  return { log: lines.join('\n') + '\n', expected: JSON.stringify(expected, null, 2) + '\n' };
}

// Busy clients with pauses; outages of several strengths; the opossum keys start at odd
// offsets so their buckets rotate out of step with each other and with the log's seconds.
const busy = {
  baseFailure: 0.03, idle: 0.01, pauseMs: [4000, 45000],
  clients: [
    { identity: 'alpha', gapMs: 90, startMs: 0, seed: 101 },
    { identity: 'bravo', gapMs: 240, startMs: 1337, seed: 202 },
    { identity: 'charlie', gapMs: 600, startMs: 4711, seed: 303 },
  ],
};
const outages = [
  { fromMs: 40000, toMs: 70000, failure: 0.9 },
  { fromMs: 120000, toMs: 150000, failure: 0.35 },
  { fromMs: 200000, toMs: 203000, failure: 1.0 },
  { fromMs: 260000, toMs: 330000, failure: 0.6 },
  { fromMs: 400000, toMs: 430000, failure: 0.22 },
  { fromMs: 470000, toMs: 520000, failure: 0.75 },
];
const fixtures = [
  {
    name: 'cockatiel-consecutive', library: 'cockatiel', durationMs: 600000,
    what: 'ConsecutiveBreaker(5), halfOpenAfter 10 s (the README\'s first example)',
    options: { breaker: 'ConsecutiveBreaker', threshold: 5, halfOpenAfter: 10000 },
    traffic: busy, outages,
  },
  {
    name: 'cockatiel-count', library: 'cockatiel', durationMs: 600000,
    what: 'CountBreaker over 40 calls, at least 20, threshold 0.25 (strict), halfOpenAfter 5 s',
    options: { breaker: 'CountBreaker', threshold: 0.25, size: 40, minimumNumberOfCalls: 20,
               halfOpenAfter: 5000 },
    traffic: busy, outages,
  },
  {
    name: 'cockatiel-sampling', library: 'cockatiel', durationMs: 600000,
    what: 'SamplingBreaker over 10 s at >= 2 rps, threshold 0.3, halfOpenAfter 4 s; long pauses ' +
          'leave old slots in the window',
    options: { breaker: 'SamplingBreaker', threshold: 0.3, duration: 10000, minimumRps: 2,
               halfOpenAfter: 4000 },
    traffic: { ...busy, idle: 0.02, pauseMs: [8000, 40000] }, outages,
  },
  {
    name: 'cockatiel-sampling-default-rps', library: 'cockatiel', durationMs: 600000,
    what: 'SamplingBreaker over 5 s, threshold 0.5, minimumRps left to the library ' +
          '(5 failures a second at the threshold), halfOpenAfter 2.5 s',
    options: { breaker: 'SamplingBreaker', threshold: 0.5, duration: 5000, halfOpenAfter: 2500 },
    traffic: {
      ...busy,
      clients: [
        { identity: 'alpha', gapMs: 40, startMs: 0, seed: 404 },
        { identity: 'bravo', gapMs: 70, startMs: 250, seed: 505 },
      ],
    },
    outages,
  },
  {
    name: 'opossum-defaults', library: 'opossum', durationMs: 600000,
    what: 'opossum\'s defaults: 50 %, resetTimeout 30 s, 10 buckets over 10 s, no volume ' +
          'threshold',
    options: {},
    traffic: busy, outages,
  },
  {
    name: 'opossum-volume', library: 'opossum', durationMs: 600000,
    what: 'errorThresholdPercentage 30, resetTimeout 5 s, 8 buckets over 20 s, volumeThreshold 25',
    options: { errorThresholdPercentage: 30, resetTimeout: 5000, rollingCountTimeout: 20000,
               rollingCountBuckets: 8, volumeThreshold: 25 },
    traffic: busy, outages,
  },
];

const out = process.argv[2] ?? '.';
for (const fixture of fixtures) {
  const { log, expected } = await run(fixture);
  writeFileSync(path.join(out, `breaker-${fixture.name}.ndjson`), log);
  writeFileSync(path.join(out, `breaker-${fixture.name}.expected.json`), expected);
}
