import { describe, expect, it } from 'vitest';
import {
  createDestinationGuard,
  type HostResolver,
  isDestinationRefusal,
  type ResolvedAddress,
} from './destination-guard.js';
import { classifyAddress, OPERATOR_TRUSTED, PUBLIC_ONLY } from './destination-policy.js';

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return undefined;
}

const strict = createDestinationGuard(PUBLIC_ONLY);
const trusted = createDestinationGuard(OPERATOR_TRUSTED);

describe('address classes', () => {
  it.each([
    ['127.0.0.1', 'private', 'loopback'],
    ['127.1', 'private', 'loopback'],
    ['2130706433', 'private', 'loopback'],
    ['10.1.2.3', 'private', 'private'],
    ['172.31.255.254', 'private', 'private'],
    ['192.168.1.10', 'private', 'private'],
    ['100.64.0.1', 'private', 'carrier-grade NAT'],
    ['0.0.0.0', 'private', 'unspecified'],
    ['::1', 'private', 'loopback'],
    ['[::1]', 'private', 'loopback'],
    ['fd12:3456::1', 'private', 'unique local'],
    ['::ffff:127.0.0.1', 'private', 'loopback'],
    ['::ffff:7f00:1', 'private', 'loopback'],
    ['2002:c0a8:0101::1', 'private', 'private (in IPv6 form)'],
    ['169.254.169.254', 'forbidden', 'cloud metadata'],
    ['169.254.170.2', 'forbidden', 'cloud metadata'],
    ['100.100.100.200', 'forbidden', 'cloud metadata'],
    ['168.63.129.16', 'forbidden', 'cloud metadata'],
    ['fd00:ec2::254', 'forbidden', 'cloud metadata'],
    ['::ffff:169.254.169.254', 'forbidden', 'cloud metadata'],
    ['64:ff9b::a9fe:a9fe', 'forbidden', 'cloud metadata (in IPv6 form)'],
    ['169.254.10.20', 'forbidden', 'link local'],
    ['fe80::1', 'forbidden', 'link local'],
    ['224.0.0.1', 'forbidden', 'multicast'],
    ['255.255.255.255', 'forbidden', 'broadcast'],
    ['192.0.2.1', 'forbidden', 'reserved'],
    ['8.8.8.8', 'public', 'public'],
    ['172.32.0.1', 'public', 'public'],
    ['2606:4700:4700::1111', 'public', 'public'],
    ['::ffff:8.8.8.8', 'public', 'public'],
  ])('%s is %s (%s)', (address, expectedClass, label) => {
    const verdict = classifyAddress(address);
    expect(verdict?.class).toBe(expectedClass);
    expect(verdict?.label).toContain(label);
  });

  it('is undefined for names', () => {
    expect(classifyAddress('warehouse.example.com')).toBeUndefined();
  });
});

describe('DestinationGuard.checkHost', () => {
  it('refuses loopback, private and link-local literals without the opt-in, naming the switch', async () => {
    for (const host of ['127.0.0.1', '10.0.0.7', '[::1]', '127.1']) {
      const error = await refusal(strict.checkHost(host, 5432));
      expect(isDestinationRefusal(error), host).toBe(true);
      expect(String(error)).toContain('QUARRY_ALLOW_PRIVATE_NETWORKS');
    }
    expect(String(await refusal(strict.checkHost('169.254.1.1', 80)))).toContain('link local');
  });

  it('refuses cloud metadata by address and by name even when everything else is allowed', async () => {
    for (const host of ['169.254.169.254', 'fd00:ec2::254', '[fd00:ec2::254]', '::ffff:a9fe:a9fe']) {
      expect(isDestinationRefusal(await refusal(trusted.checkHost(host, 80))), host).toBe(true);
    }
    const resolve: HostResolver = async () => [{ address: '8.8.8.8', family: 4 }];
    const guard = createDestinationGuard(OPERATOR_TRUSTED, { resolve });
    for (const host of ['metadata.google.internal', 'METADATA.google.internal.', 'metadata']) {
      expect(String(await refusal(guard.checkHost(host, 80)))).toContain('cloud metadata');
    }
  });

  it('pins the checked address: one resolution per check, and the driver gets that address', async () => {
    const answers: ResolvedAddress[][] = [
      [{ address: '93.184.216.34', family: 4 }],
      [{ address: '127.0.0.1', family: 4 }],
    ];
    let calls = 0;
    const guard = createDestinationGuard(PUBLIC_ONLY, { resolve: async () => answers[calls++] ?? [] });
    await expect(guard.checkHost('Warehouse.Example.com.', 5432)).resolves.toEqual({
      host: 'warehouse.example.com',
      address: '93.184.216.34',
      family: 4,
      port: 5432,
    });
    expect(calls).toBe(1);
    // The next session resolves again, and the rebound answer is refused.
    expect(String(await refusal(guard.checkHost('warehouse.example.com', 5432)))).toContain(
      'resolves to 127.0.0.1, a loopback address',
    );
  });

  it('refuses a name when any one of its addresses is not allowed', async () => {
    const resolve: HostResolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ];
    const error = await refusal(createDestinationGuard(PUBLIC_ONLY, { resolve }).checkHost('w.example', 1));
    expect(String(error)).toContain('resolves to 10.0.0.5, a private address');
  });

  it('refuses what is not one host name: lists, paths, URLs', async () => {
    for (const host of ['a.example,b.example', '/var/run/postgresql', 'http://x', 'a b', '']) {
      expect(isDestinationRefusal(await refusal(trusted.checkHost(host, 1))), host).toBe(true);
    }
  });

  it('reports a name that does not resolve as retryable, not as a refusal', async () => {
    const guard = createDestinationGuard(PUBLIC_ONLY, {
      resolve: async () => {
        throw new Error('ENOTFOUND');
      },
    });
    const error = await refusal(guard.checkHost('nowhere.invalid', 1));
    expect(isDestinationRefusal(error)).toBe(false);
    expect(error).toMatchObject({ code: 'CONNECT_FAILED', driverCode: 'HOST_UNRESOLVABLE', retryable: true });
  });

  it('resolves localhost with the real resolver and refuses it', async () => {
    expect(String(await refusal(strict.checkHost('localhost', 5432)))).toMatch(
      /resolves to (127\.0\.0\.1|::1), a loopback address/,
    );
    await expect(trusted.checkHost('localhost', 5432)).resolves.toMatchObject({ host: 'localhost' });
  });
});

describe('sockets, files and identity', () => {
  it('each needs its own switch', () => {
    const onlyPrivate = createDestinationGuard({ ...PUBLIC_ONLY, privateNetworks: true });
    expect(() => strict.checkSocket('/var/run/postgresql')).toThrow(/unix socket/);
    expect(() => onlyPrivate.checkSocket('/var/run/postgresql')).not.toThrow();
    expect(() => onlyPrivate.checkFile('/etc/passwd')).toThrow(/QUARRY_ALLOW_HOST_FILES/);
    expect(() => onlyPrivate.checkIdentity('ADC')).toThrow(/QUARRY_ALLOW_HOST_IDENTITY/);
    expect(() => trusted.checkFile('/data/x.duckdb')).not.toThrow();
    expect(() => trusted.checkIdentity('ADC')).not.toThrow();
  });

  it('checkUrl checks the URL host and default port, and only http(s)', async () => {
    await expect(trusted.checkUrl('https://127.0.0.1/x')).resolves.toMatchObject({ port: 443 });
    expect(isDestinationRefusal(await refusal(strict.checkUrl('http://127.0.0.1:8080/')))).toBe(true);
    expect(isDestinationRefusal(await refusal(trusted.checkUrl('file:///etc/passwd')))).toBe(true);
  });
});
