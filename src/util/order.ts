/** Total orders used to sort every list the compiler emits, so output never depends on input order. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders `[key, value]` entries by key. */
export function compareByKey(a: readonly [string, unknown], b: readonly [string, unknown]): number {
  return compareText(a[0], b[0]);
}

/** Where `key` is in `list`, sorted by `keyOf` in text order, by binary search; -1 when it is not. */
export function indexOfSorted<T>(list: readonly T[], key: string, keyOf: (item: T) => string): number {
  let [low, high] = [0, list.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (keyOf(list[middle]!) < key) low = middle + 1;
    else high = middle;
  }
  return low < list.length && keyOf(list[low]!) === key ? low : -1;
}

/** Where `key` is in a list of strings sorted in text order, by binary search; -1 when it is not. */
export function indexOfSortedText(list: readonly string[], key: string): number {
  return indexOfSorted(list, key, itself);
}

function itself(text: string): string {
  return text;
}

export function compareNumbers(a: number, b: number): number {
  return a - b;
}

/** IPv4 before IPv6; IPv4 numerically (10.0.0.9 before 10.0.0.10); IPv6 by its expanded form. */
export function compareIps(a: string, b: string): number {
  return compareText(ipSortKey(a), ipSortKey(b));
}

/**
 * A string whose text order is the IP order of `compareIps`; precompute it to sort many IPs.
 * Expects a valid address (a `:` means IPv6).
 */
export function ipSortKey(ip: string): string {
  if (ip.includes(":")) return `6${expandIpv6(ip)}`;
  let value = 0;
  let octet = 0;
  for (let i = 0; i < ip.length; i++) {
    const code = ip.charCodeAt(i);
    if (code === 46 /* . */) {
      value = value * 256 + octet;
      octet = 0;
    } else octet = octet * 10 + (code - 48);
  }
  return `4${String(value * 256 + octet).padStart(10, "0")}`;
}

function expandIpv6(ip: string): string {
  const [head = "", tail = ""] = ip.split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const middle = Array(Math.max(0, 8 - left.length - right.length)).fill("0");
  return [...left, ...middle, ...right].map((group) => group.padStart(4, "0")).join(":");
}
