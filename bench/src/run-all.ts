// `npm run bench -w @quarry/bench` (and `npm run bench` at the root): the gateway bench (issue 5,
// scenarios a–f), then the connector bench, each with its default options. Whole run: about
// 8–9 minutes. `--skip-connector` runs the gateway bench alone; every other option goes to it
// (see gateway-bench.ts, e.g. `--seconds 3 --memory-budget 60` for a quicker look).
import {
  connectorBenchOptionsFrom,
  formatConnectorBench,
  runConnectorBench,
  writeConnectorBenchJson,
} from './connector-bench.js';
import { gatewayBenchOptionsFrom, runGatewayBench } from './gateway-bench.js';
import { formatGatewayBench, writeGatewayBenchJson } from './gateway-bench-report.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const skipConnector = argv.includes('--skip-connector');
  const gatewayOptions = gatewayBenchOptionsFrom(
    argv.filter((a) => a !== '--skip-connector'),
    process.env,
  );
  const started = performance.now();
  const gateway = await runGatewayBench(gatewayOptions);
  console.log(formatGatewayBench(gateway));
  console.log(`results: ${await writeGatewayBenchJson(gateway)}\n`);
  if (!skipConnector) {
    const options = connectorBenchOptionsFrom([], process.env);
    const results = await runConnectorBench(options);
    console.log(formatConnectorBench(results, options));
    console.log(`results: ${await writeConnectorBenchJson(results, options)}`);
    if (results.some((r) => r.status === 'failed')) process.exitCode = 1;
  }
  console.log(`\nnpm run bench took ${((performance.now() - started) / 60_000).toFixed(1)} min`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
