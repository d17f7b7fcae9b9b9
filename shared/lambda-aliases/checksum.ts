/**
 * What the deployed bundles have in place of `@smithy/core/checksum` (infra/bundling.ts aliases it
 * here). The DynamoDB client takes one thing of it, `Sha256`, the hash it signs requests with; the
 * module's Sha256 falls back to a hash written in JavaScript where Node has no `node:crypto`, and
 * that fallback, with the module's MD5 and CRC32 classes, is about 4 KB of every bundle, parsed on
 * every cold start and never run on Lambda. This is the module's own native class, as it has it.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

type SourceData = string | ArrayBuffer | ArrayBufferView;

const toBuffer = (data: SourceData): string | Buffer =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256, or HMAC-SHA256 with a secret: the SDK's `Checksum` interface, on `node:crypto`. */
export class Sha256 {
  readonly digestLength = 32;
  private hash: Hash | Hmac;
  private finished = false;

  constructor(private readonly secret?: SourceData) {
    this.hash = this.createHash();
  }

  update(data: Buffer | Uint8Array | string): void {
    if (this.finished) throw new Error('Attempted to update an already finished hash.');
    this.hash.update(data);
  }

  async digest(): Promise<Uint8Array> {
    let buffer: Buffer;
    if (this.secret) {
      // An HMAC cannot be copied: it is finished once read.
      this.finished = true;
      buffer = this.hash.digest();
    } else {
      buffer = (this.hash as Hash).copy().digest();
    }
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }

  reset(): void {
    this.hash = this.createHash();
    this.finished = false;
  }

  private createHash(): Hash | Hmac {
    return this.secret ? createHmac('sha256', toBuffer(this.secret)) : createHash('sha256');
  }
}
