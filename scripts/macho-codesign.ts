/**
 * The ad-hoc code signature of a macOS executable, checked and, when it does not match the file, made
 * again: `bun build --compile --target=bun-darwin-x64` writes the application into the runtime's `__BUN`
 * segment and moves `__LINKEDIT` behind it, but keeps the runtime's own signature (Bun re-signs only its
 * arm64 output), whose page hashes then describe another file, and macOS kills an executable whose
 * signature does not match (always on Apple silicon; on Intel too once it is signed at all).
 *
 * The layout, from Apple's `cs_blobs.h` (all of it big-endian, inside a little-endian Mach-O):
 * LC_CODE_SIGNATURE points at a SuperBlob (magic 0xfade0cc0: length, count, then `count` (type, offset)
 * entries) at the end of `__LINKEDIT`; its CodeDirectory (magic 0xfade0c02, slot 0) holds one hash per
 * page of the file up to `codeLimit` (the last page hashed only up to it, unpadded), and before them one
 * hash per "special slot" (slot -n: the blob of type n, the requirements or entitlements).
 *
 * The signature made here is the one Bun writes for arm64 (and Go's linker for its own executables):
 * a SuperBlob holding one CodeDirectory (version 0x20400, flags adhoc and linker-signed, SHA-256 of 4 KiB
 * pages, no special slots, `__TEXT` as the executable segment), no requirements, no entitlements, no CMS
 * signature. The runtime's own Developer ID signature (with the hardened runtime and its JIT
 * entitlements) cannot be kept: its CMS blob signs the CodeDirectory that no longer matches. Without the
 * hardened runtime the JIT needs no entitlement, as for Bun's arm64 output.
 */
import { createHash } from "node:crypto";
import { readFileSync, renameSync, writeFileSync } from "node:fs";

const MH_MAGIC_64 = 0xfeedfacf;
const LC_SEGMENT_64 = 0x19;
const LC_CODE_SIGNATURE = 0x1d;
const CSMAGIC_EMBEDDED_SIGNATURE = 0xfade0cc0;
const CSMAGIC_CODEDIRECTORY = 0xfade0c02;
/** Slot 0 holds the CodeDirectory; 0x1000 to 0x1004 the alternate ones (other hash types). */
const CSSLOT_CODEDIRECTORY = 0;
const CSSLOT_ALTERNATE_CODEDIRECTORIES = 0x1000;
const CS_ADHOC = 0x2;
const CS_LINKER_SIGNED = 0x20000;
const CS_EXECSEG_MAIN_BINARY = 0x1;
/** CS_HASHTYPE_*: the digest and the bytes of it a slot keeps. */
const HASH_TYPES: Record<number, { algorithm: string; size: number }> = {
  1: { algorithm: "sha1", size: 20 },
  2: { algorithm: "sha256", size: 32 },
  3: { algorithm: "sha256", size: 20 },
  4: { algorithm: "sha384", size: 48 },
};
/** The CodeDirectory's fixed fields up to version 0x20400 (execSegBase, execSegLimit, execSegFlags). */
const CODE_DIRECTORY_SIZE = 88;
const PAGE_SHIFT = 12;
const PAGE_SIZE = 1 << PAGE_SHIFT;
/** The identifier our signature gives the executable (`codesign -dv` shows it; Bun's says a.out). */
const IDENTIFIER = "bulwark";

interface Segment {
  /** Where its load command starts in the file. */
  command: number;
  fileoff: number;
  filesize: number;
}

interface MachOLayout {
  text: Segment;
  linkedit: Segment;
  /** LC_CODE_SIGNATURE: the command's position and the signature's place in the file. */
  signature: { command: number; dataoff: number; datasize: number } | null;
}

/** The load commands a signature depends on, of a thin 64-bit Mach-O; throws for anything else. */
function readLayout(file: Buffer): MachOLayout {
  if (file.length < 32 || file.readUInt32LE(0) !== MH_MAGIC_64)
    throw new Error("not a thin 64-bit little-endian Mach-O file (a universal or 32-bit one is not handled)");
  const count = file.readUInt32LE(16);
  const segments = new Map<string, Segment>();
  let signature: MachOLayout["signature"] = null;
  let at = 32;
  for (let index = 0; index < count; index++) {
    const [cmd, size] = [file.readUInt32LE(at), file.readUInt32LE(at + 4)];
    if (cmd === LC_SEGMENT_64) {
      const name = file
        .subarray(at + 8, at + 24)
        .toString("latin1")
        .replace(/\0+$/, "");
      segments.set(name, {
        command: at,
        fileoff: Number(file.readBigUInt64LE(at + 40)),
        filesize: Number(file.readBigUInt64LE(at + 48)),
      });
    } else if (cmd === LC_CODE_SIGNATURE) {
      signature = { command: at, dataoff: file.readUInt32LE(at + 8), datasize: file.readUInt32LE(at + 12) };
    }
    at += size;
  }
  const text = segments.get("__TEXT");
  const linkedit = segments.get("__LINKEDIT");
  if (!text || !linkedit) throw new Error("the Mach-O file has no __TEXT or no __LINKEDIT segment");
  return { text, linkedit, signature };
}

/**
 * What is wrong with the file's embedded signature, in words: nothing (an empty list) when the SuperBlob
 * ends the file and `__LINKEDIT`, and every CodeDirectory covers the file up to the signature with
 * hashes that match its pages and the blobs of its special slots.
 */
export function codeSignatureProblems(file: Buffer): string[] {
  const { linkedit, signature } = readLayout(file);
  if (!signature) return ["no LC_CODE_SIGNATURE"];
  const problems: string[] = [];
  const { dataoff, datasize } = signature;
  if (dataoff + datasize !== file.length)
    problems.push(`the signature ends at ${dataoff + datasize}, the file at ${file.length}`);
  if (linkedit.fileoff + linkedit.filesize !== file.length)
    problems.push(`__LINKEDIT ends at ${linkedit.fileoff + linkedit.filesize}, the file at ${file.length}`);
  if (dataoff + 12 > file.length || file.readUInt32BE(dataoff) !== CSMAGIC_EMBEDDED_SIGNATURE)
    return [...problems, "no embedded-signature SuperBlob at LC_CODE_SIGNATURE's offset"];
  const blobs = new Map<number, Buffer>();
  for (let index = 0; index < file.readUInt32BE(dataoff + 8); index++) {
    const type = file.readUInt32BE(dataoff + 12 + 8 * index);
    const start = dataoff + file.readUInt32BE(dataoff + 16 + 8 * index);
    blobs.set(type, file.subarray(start, start + file.readUInt32BE(start + 4)));
  }
  const directories = [...blobs].filter(
    ([type]) =>
      type === CSSLOT_CODEDIRECTORY ||
      (type >= CSSLOT_ALTERNATE_CODEDIRECTORIES && type < CSSLOT_ALTERNATE_CODEDIRECTORIES + 5),
  );
  if (directories.length === 0) problems.push("the SuperBlob holds no CodeDirectory");
  for (const [type, directory] of directories) {
    const name = `CodeDirectory ${type.toString(16)}`;
    if (directory.readUInt32BE(0) !== CSMAGIC_CODEDIRECTORY) {
      problems.push(`${name}: bad magic`);
      continue;
    }
    const hashOffset = directory.readUInt32BE(16);
    const specialSlots = directory.readUInt32BE(24);
    const codeSlots = directory.readUInt32BE(28);
    const codeLimit = directory.readUInt32BE(32);
    const hashType = HASH_TYPES[directory[37] ?? 0];
    const pageSize = 2 ** (directory[39] ?? 0);
    if (!hashType || directory[36] !== hashType.size) {
      problems.push(`${name}: hash type ${directory[37]} of ${directory[36]} bytes is not known`);
      continue;
    }
    const slot = (index: number) =>
      directory.subarray(hashOffset + index * hashType.size, hashOffset + (index + 1) * hashType.size);
    const digest = (bytes: Buffer) =>
      createHash(hashType.algorithm).update(bytes).digest().subarray(0, hashType.size);
    if (codeLimit !== dataoff)
      problems.push(`${name}: codeLimit ${codeLimit} is not the signature's offset ${dataoff}`);
    if (codeSlots !== Math.ceil(codeLimit / pageSize))
      problems.push(`${name}: ${codeSlots} code slots for ${Math.ceil(codeLimit / pageSize)} pages`);
    const mismatched: number[] = [];
    for (let page = 0; page < codeSlots; page++) {
      const bytes = file.subarray(page * pageSize, Math.min((page + 1) * pageSize, codeLimit));
      if (!digest(bytes).equals(slot(page))) mismatched.push(page);
    }
    if (mismatched.length > 0)
      problems.push(
        `${name}: ${mismatched.length} of ${codeSlots} page hashes do not match (pages ${mismatched.slice(0, 5).join(", ")}${mismatched.length > 5 ? ", …" : ""})`,
      );
    for (let special = 1; special <= specialSlots; special++) {
      const blob = blobs.get(special);
      const expected = blob ? digest(blob) : Buffer.alloc(hashType.size);
      if (!expected.equals(slot(-special))) problems.push(`${name}: special slot -${special} does not match`);
    }
  }
  return problems;
}

/**
 * The file with a new ad-hoc signature in place of the one at LC_CODE_SIGNATURE (see the top of this
 * file), at the same offset: LC_CODE_SIGNATURE's size and `__LINKEDIT`'s sizes follow the new
 * signature's, and the file ends with it. The signature must already end `__LINKEDIT` and the file, as
 * the linker puts it: nothing else is moved.
 */
export function signAdHoc(file: Buffer): Buffer {
  const { text, linkedit, signature } = readLayout(file);
  if (!signature) throw new Error("the Mach-O file has no LC_CODE_SIGNATURE to re-sign in place");
  const { dataoff } = signature;
  if (dataoff < linkedit.fileoff || dataoff % 16 !== 0 || dataoff + signature.datasize !== file.length)
    throw new Error("the code signature is not 16-byte aligned at the end of __LINKEDIT and of the file");
  const identifier = Buffer.from(`${IDENTIFIER}\0`, "latin1");
  const codeSlots = Math.ceil(dataoff / PAGE_SIZE);
  const hashOffset = CODE_DIRECTORY_SIZE + identifier.length;
  const directoryLength = hashOffset + codeSlots * 32;
  const superBlobLength = 12 + 8 + directoryLength;
  const datasize = Math.ceil(superBlobLength / 16) * 16;
  const signed = Buffer.alloc(dataoff + datasize);
  file.copy(signed, 0, 0, dataoff);

  // The load commands first: page 0 holds them, and its hash must be of the final bytes.
  signed.writeUInt32LE(datasize, signature.command + 12);
  const linkeditSize = signed.length - linkedit.fileoff;
  signed.writeBigUInt64LE(BigInt(Math.ceil(linkeditSize / 0x4000) * 0x4000), linkedit.command + 32); // vmsize
  signed.writeBigUInt64LE(BigInt(linkeditSize), linkedit.command + 48); // filesize

  let at = dataoff;
  const u32 = (value: number) => {
    signed.writeUInt32BE(value, at);
    at += 4;
  };
  const u64 = (value: number) => {
    signed.writeBigUInt64BE(BigInt(value), at);
    at += 8;
  };
  u32(CSMAGIC_EMBEDDED_SIGNATURE);
  u32(superBlobLength);
  u32(1); // one blob:
  u32(CSSLOT_CODEDIRECTORY);
  u32(20); // right after this index
  u32(CSMAGIC_CODEDIRECTORY);
  u32(directoryLength);
  u32(0x20400); // version: with the executable segment fields
  u32(CS_ADHOC | CS_LINKER_SIGNED);
  u32(hashOffset);
  u32(CODE_DIRECTORY_SIZE); // identOffset
  u32(0); // nSpecialSlots
  u32(codeSlots);
  u32(dataoff); // codeLimit
  signed.writeUInt8(32, at++); // hashSize
  signed.writeUInt8(2, at++); // hashType: SHA-256
  signed.writeUInt8(0, at++); // platform
  signed.writeUInt8(PAGE_SHIFT, at++);
  u32(0); // spare2
  u32(0); // scatterOffset
  u32(0); // teamOffset
  u32(0); // spare3
  u64(0); // codeLimit64: unused below 4 GiB
  u64(text.fileoff); // execSegBase
  u64(Math.ceil(text.filesize / PAGE_SIZE) * PAGE_SIZE); // execSegLimit
  u64(CS_EXECSEG_MAIN_BINARY);
  identifier.copy(signed, at);
  at += identifier.length;
  for (let page = 0; page < codeSlots; page++) {
    const bytes = signed.subarray(page * PAGE_SIZE, Math.min((page + 1) * PAGE_SIZE, dataoff));
    createHash("sha256").update(bytes).digest().copy(signed, at);
    at += 32;
  }
  return signed;
}

/**
 * Checks the signature of the macOS executable at `path` and, when it does not match the file, signs it
 * again ad hoc (signAdHoc) and checks that. Returns what was wrong before, empty when it was kept.
 */
export function ensureAdHocSignature(path: string): string[] {
  const file = readFileSync(path);
  const problems = codeSignatureProblems(file);
  if (problems.length === 0) return [];
  const signed = signAdHoc(file);
  const remaining = codeSignatureProblems(signed);
  if (remaining.length > 0) throw new Error(`${path}: re-signed, still ${remaining.join("; ")}`);
  writeFileSync(`${path}.signing`, signed, { mode: 0o755 });
  renameSync(`${path}.signing`, path);
  return problems;
}
