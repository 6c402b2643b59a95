// Runs each official client's webhook verifier (Python, Go, PHP, Ruby) in its own process over a
// JSON file of cases [{secret, body, headers}], printing one verdict a line: `ok <type>` or
// `refused`. Used by test/webhook-verifiers.test.ts and test/webhooks.test.ts.
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './gateway-process.js';

export interface VerifierProgram {
  /** The tool that must be on PATH. */
  readonly needs: string;
  /** Runs the verifier over `casesFile` (scratch files go under `dir`). */
  run(casesFile: string, dir: string): SpawnSyncReturns<string>;
}

export const VERIFIER_PROGRAMS: Readonly<Record<string, VerifierProgram>> = {
  python: {
    needs: 'python3',
    run: (casesFile) =>
      spawnSync(
        'python3',
        [
          '-c',
          `import json, sys
sys.path.insert(0, ${JSON.stringify(join(REPO_ROOT, 'clients/python/src'))})
from quarry_client import Webhook, WebhookVerificationError
for c in json.load(open(sys.argv[1], encoding="utf-8")):
    try:
        event = Webhook.verify(c["secret"], c["body"], c["headers"])
        print("ok " + event["type"])
    except WebhookVerificationError:
        print("refused")`,
          casesFile,
        ],
        { encoding: 'utf8' },
      ),
  },
  go: {
    needs: 'go',
    run: (casesFile, dir) => {
      const program = join(dir, 'go');
      mkdirSync(program, { recursive: true });
      writeFileSync(
        join(program, 'go.mod'),
        `module verifier\n\ngo 1.19\n\nrequire quarry.dev/quarry-go v0.0.0\n\nreplace quarry.dev/quarry-go => ${join(REPO_ROOT, 'clients/go')}\n`,
      );
      writeFileSync(
        join(program, 'main.go'),
        `package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"

	quarry "quarry.dev/quarry-go"
)

func main() {
	raw, _ := os.ReadFile(os.Args[1])
	var cases []struct {
		Secret  string            \`json:"secret"\`
		Body    string            \`json:"body"\`
		Headers map[string]string \`json:"headers"\`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		panic(err)
	}
	for _, c := range cases {
		headers := http.Header{}
		for k, v := range c.Headers {
			headers.Set(k, v)
		}
		event, err := quarry.VerifyWebhook(c.Secret, []byte(c.Body), headers)
		switch {
		case err == nil:
			fmt.Println("ok " + event.Type)
		case errors.Is(err, quarry.ErrWebhookVerification):
			fmt.Println("refused")
		default:
			fmt.Println("error " + err.Error())
		}
	}
}
`,
      );
      const cache = join(process.env.TMPDIR ?? '/tmp', 'quarry-clients-go');
      return spawnSync('go', ['run', '.', casesFile], {
        cwd: program,
        encoding: 'utf8',
        env: {
          ...process.env,
          GOCACHE: join(cache, 'cache'),
          GOPATH: join(cache, 'path'),
          GOPROXY: 'off',
          GOFLAGS: '-mod=mod',
          GOTOOLCHAIN: 'local',
        },
      });
    },
  },
  php: {
    needs: 'php',
    run: (casesFile) =>
      spawnSync(
        'php',
        [
          '-r',
          `require ${JSON.stringify(join(REPO_ROOT, 'clients/php/tests/bootstrap.php'))};
foreach (json_decode(file_get_contents($argv[1]), true) as $c) {
    try {
        $event = Quarry\\Webhook::verify($c['secret'], $c['body'], $c['headers']);
        echo 'ok ', $event['type'], "\\n";
    } catch (Quarry\\Exception\\WebhookVerificationException $e) {
        echo "refused\\n";
    }
}`,
          casesFile,
        ],
        { encoding: 'utf8' },
      ),
  },
  ruby: {
    needs: 'ruby',
    run: (casesFile) =>
      spawnSync(
        'ruby',
        [
          '-I',
          join(REPO_ROOT, 'clients/ruby/lib'),
          '-e',
          `require "json"
require "quarry"
JSON.parse(File.read(ARGV[0], encoding: "UTF-8")).each do |c|
  event = Quarry::Webhook.verify(c["secret"], c["body"], c["headers"])
  puts "ok #{event["type"]}"
rescue Quarry::WebhookVerificationError
  puts "refused"
end`,
          casesFile,
        ],
        { encoding: 'utf8' },
      ),
  },
};

/** Whether `tool` is on PATH. */
export function hasTool(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
}
