import { describe, expect, test } from "bun:test";
import {
  checkWebhookTarget,
  classifyIpAddress,
  type HostnameLookup,
  type IpAddressClassification,
  isCloudMetadataAddress,
  resolveHostAddresses,
} from "../../src/lib/network-address.ts";

const cases: Record<IpAddressClassification, string[]> = {
  public: [
    "8.8.8.8",
    "1.1.1.1",
    "172.15.255.255",
    "172.32.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "169.253.255.255",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "192.0.1.1",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ],
  loopback: [
    "127.0.0.1",
    "127.255.255.254",
    "::1",
    "0:0:0:0:0:0:0:1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "0:0:0:0:0:ffff:7f00:0001",
    "::FFFF:127.0.0.1",
    "64:ff9b::127.0.0.1",
    "64:ff9b::7f00:1",
    "2002:7f00:1::",
    // The deprecated IPv4-compatible form reaches the IPv4 address on some stacks.
    "::127.0.0.1",
  ],
  private: [
    "10.0.0.1",
    "10.255.255.255",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",
    "100.127.255.255",
    "fc00::1",
    "fd12:3456:789a::1",
    "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
    "::ffff:10.0.0.1",
    "::ffff:c0a8:101",
    "64:ff9b::192.168.0.1",
    "64:ff9b:1::1",
  ],
  link_local: [
    "169.254.0.1",
    "169.254.169.254",
    "fe80::1",
    "fe80::1%eth0",
    "febf:ffff::1",
    "::ffff:169.254.169.254",
    "::ffff:a9fe:a9fe",
    "64:ff9b::a9fe:a9fe",
    "::a9fe:a9fe",
    "::169.254.169.254",
  ],
  unspecified: ["0.0.0.0", "0.1.2.3", "::", "0:0:0:0:0:0:0:0", "::ffff:0.0.0.0"],
  multicast: ["224.0.0.1", "239.255.255.250", "ff02::1", "ff05::1:3", "ffff::1", "::ffff:224.0.0.251"],
  reserved: [
    "240.0.0.1",
    "255.255.255.254",
    "255.255.255.255",
    "192.0.0.8",
    "198.18.0.1",
    "198.19.255.255",
    "192.0.2.1",
    "2001:db8::1",
    "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
    "::ffff:240.0.0.1",
    "fec0::1",
    "100::1",
  ],
};

describe("classifyIpAddress", () => {
  for (const [classification, addresses] of Object.entries(cases)) {
    test.each(addresses)(`%s is ${classification}`, (address) => {
      expect(classifyIpAddress(address)).toBe(classification as IpAddressClassification);
    });
  }

  test("rejects what is not an IP address", () => {
    for (const notAnAddress of ["localhost", "", "1.2.3", "256.0.0.1", "::1::", "[::1]", "12345::1"]) {
      expect(() => classifyIpAddress(notAnAddress)).toThrow(TypeError);
    }
  });
});

describe("isCloudMetadataAddress", () => {
  test.each([
    "100.100.100.200",
    "::ffff:100.100.100.200",
    "::ffff:6464:64c8",
    "64:ff9b::100.100.100.200",
    "fd00:ec2::254",
    "fd00:ec2:0:0:0:0:0:254",
    "FD00:EC2::254",
  ])("%s is a metadata service", (address) => {
    expect(isCloudMetadataAddress(address)).toBe(true);
  });

  test.each(["100.100.100.201", "fd00:ec2::253", "8.8.8.8", "::1", "not an address"])(
    "%s is not",
    (address) => {
      expect(isCloudMetadataAddress(address)).toBe(false);
    },
  );
});

function fakeLookup(table: Record<string, string[]>): HostnameLookup {
  return async (hostname) => {
    const addresses = table[hostname];
    if (addresses === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    }
    return addresses;
  };
}

const lookup = fakeLookup({
  "hooks.example.com": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  localhost: ["127.0.0.1"],
  "mixed.example.com": ["93.184.215.14", "10.0.0.5"],
  "mixed6.example.com": ["2606:2800:21f:cb07:6820:80da:af6b:8b2c", "fd00::5"],
  "empty.example.com": [],
  "garbage.example.com": ["not-an-address"],
});

const strict = { allowPrivateTargets: false, lookup };
const permissive = { allowPrivateTargets: true, lookup };

describe("checkWebhookTarget", () => {
  test("accepts a public https host and returns its addresses", async () => {
    const result = await checkWebhookTarget("https://hooks.example.com/bulwark?x=1", strict);
    expect(result).toEqual({
      ok: true,
      url: new URL("https://hooks.example.com/bulwark?x=1"),
      addresses: ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    });
  });

  test("accepts a public literal IP without a lookup", async () => {
    const failingLookup: HostnameLookup = () => Promise.reject(new Error("must not be called"));
    const result = await checkWebhookTarget("http://8.8.8.8:8080/hook", {
      allowPrivateTargets: false,
      lookup: failingLookup,
    });
    expect(result).toMatchObject({ ok: true, addresses: ["8.8.8.8"] });
    const ipv6 = await checkWebhookTarget("http://[2606:4700:4700::1111]/hook", {
      allowPrivateTargets: false,
      lookup: failingLookup,
    });
    expect(ipv6).toMatchObject({ ok: true, addresses: ["2606:4700:4700::1111"] });
  });

  test.each([
    ["ftp://hooks.example.com/x"],
    ["file:///etc/passwd"],
    ["javascript:alert(1)"],
    ["ws://hooks.example.com/"],
    ["data:text/plain,hi"],
  ])("refuses the scheme of %s", async (url) => {
    expect(await checkWebhookTarget(url, permissive)).toEqual({
      ok: false,
      reason: "url must use http or https",
    });
  });

  test("refuses credentials in the url", async () => {
    for (const url of [
      "https://user:pass@hooks.example.com/",
      "https://user@hooks.example.com/",
      "https://:pass@hooks.example.com/",
    ]) {
      expect(await checkWebhookTarget(url, permissive)).toEqual({
        ok: false,
        reason: "url must not contain credentials",
      });
    }
  });

  test("refuses what is not a url", async () => {
    expect(await checkWebhookTarget("not a url", strict)).toEqual({
      ok: false,
      reason: "url is not a valid URL",
    });
    expect(await checkWebhookTarget("http://", strict)).toMatchObject({ ok: false });
  });

  test("refuses a host that does not resolve, or resolves to nothing", async () => {
    expect(await checkWebhookTarget("https://nowhere.example.com/", permissive)).toEqual({
      ok: false,
      reason: "host nowhere.example.com could not be resolved",
    });
    expect(await checkWebhookTarget("https://empty.example.com/", permissive)).toEqual({
      ok: false,
      reason: "host empty.example.com could not be resolved",
    });
    expect(await checkWebhookTarget("https://garbage.example.com/", permissive)).toMatchObject({ ok: false });
  });

  test("refuses localhost resolved by a fake lookup", async () => {
    expect(await checkWebhookTarget("http://localhost:3000/hook", strict)).toEqual({
      ok: false,
      reason:
        "target address 127.0.0.1 is loopback; private targets are not allowed (webhooks.allow_private_targets)",
    });
  });

  test("refuses localhost resolved by this machine's resolver", async () => {
    const result = await checkWebhookTarget("http://localhost/hook", { allowPrivateTargets: false });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toMatch(
        /^target address (127\.0\.0\.1|::1) is loopback; private targets are not allowed/,
      );
    }
  });

  test("allows localhost resolved by this machine's resolver when private targets are allowed", async () => {
    const result = await checkWebhookTarget("http://localhost/hook", { allowPrivateTargets: true });
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.addresses.length).toBeGreaterThan(0);
      for (const address of result.addresses) {
        expect(classifyIpAddress(address)).toBe("loopback");
      }
    }
  });

  test("refuses a host resolving to a mix of public and private addresses", async () => {
    expect(await checkWebhookTarget("https://mixed.example.com/", strict)).toEqual({
      ok: false,
      reason:
        "target address 10.0.0.5 is private; private targets are not allowed (webhooks.allow_private_targets)",
    });
    expect(await checkWebhookTarget("https://mixed6.example.com/", strict)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("fd00::5 is private"),
    });
  });

  test.each([
    ["http://127.0.0.1/", "127.0.0.1 is loopback"],
    ["http://2130706433/", "127.0.0.1 is loopback"],
    ["http://0x7f.1/", "127.0.0.1 is loopback"],
    ["http://[::1]:8080/", "::1 is loopback"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1 is loopback"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is link_local"],
    ["http://[fe80::1]/", "fe80::1 is link_local"],
    ["http://0.0.0.0/", "0.0.0.0 is unspecified"],
    ["http://[::]/", ":: is unspecified"],
    ["http://192.168.1.10/", "192.168.1.10 is private"],
    ["http://100.100.100.100/", "100.100.100.100 is private"],
    ["http://[64:ff9b::a00:1]/", "64:ff9b::a00:1 is private"],
    ["http://224.0.0.1/", "224.0.0.1 is multicast"],
    ["http://255.255.255.255/", "255.255.255.255 is reserved"],
  ])("refuses the literal target %s", async (url, expectedReason) => {
    const result = await checkWebhookTarget(url, strict);
    expect(result).toMatchObject({ ok: false, reason: expect.stringContaining(expectedReason) });
  });

  test("allows private, loopback and mixed targets when allowPrivateTargets is true", async () => {
    for (const url of [
      "http://localhost:3000/hook",
      "https://mixed.example.com/",
      "http://10.0.0.1/",
      "http://[::1]/",
      "http://169.254.169.254/",
    ]) {
      expect(await checkWebhookTarget(url, permissive)).toMatchObject({ ok: true });
    }
  });
});

describe("resolveHostAddresses", () => {
  test("answers an IP literal, bracketed or not, without a lookup", async () => {
    const failingLookup: HostnameLookup = () => Promise.reject(new Error("must not be called"));
    expect(await resolveHostAddresses("[::1]", failingLookup)).toEqual(["::1"]);
    expect(await resolveHostAddresses("169.254.169.254", failingLookup)).toEqual(["169.254.169.254"]);
  });

  test("answers every address of a name, and none for a name that does not resolve", async () => {
    expect(await resolveHostAddresses("mixed.example.com", lookup)).toEqual(["93.184.215.14", "10.0.0.5"]);
    expect(await resolveHostAddresses("nowhere.example.com", lookup)).toEqual([]);
  });
});
