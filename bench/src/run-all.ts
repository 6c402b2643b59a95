// `npm run bench -w @quarry/bench`: every bench in this package, one after another, with their
// default options. Today that is the connector bench; HTTP scenarios join here as they land.
import {
  connectorBenchOptionsFrom,
  formatConnectorBench,
  runConnectorBench,
  writeConnectorBenchJson,
} from './connector-bench.js';

async function main(): Promise<void> {
  const options = connectorBenchOptionsFrom([], process.env);
  const results = await runConnectorBench(options);
  console.log(formatConnectorBench(results, options));
  console.log(`results: ${await writeConnectorBenchJson(results, options)}`);
  if (results.some((r) => r.status === 'failed')) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
