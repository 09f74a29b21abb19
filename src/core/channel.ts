/**
 * A bounded async queue from many producers to one consumer (eval results to whoever journals them): `push` waits
 * while it is full, so producers cannot run ahead of the consumer and memory holds at most `capacity` items.
 */
export class Channel<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private closed = false;
  private readonly pushers: (() => void)[] = [];
  private puller: (() => void) | undefined;

  constructor(private readonly capacity: number) {}

  async push(item: T): Promise<void> {
    while (this.items.length >= this.capacity && !this.closed)
      await new Promise<void>((resolve) => this.pushers.push(resolve));
    if (this.closed) throw new Error('channel closed');
    this.items.push(item);
    this.puller?.();
  }

  /** No more items: the consumer ends after the ones queued. */
  close(): void {
    this.closed = true;
    this.puller?.();
    for (const p of this.pushers.splice(0)) p();
  }

  get length(): number {
    return this.items.length;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length > 0) {
        const item = this.items.shift()!;
        this.pushers.shift()?.();
        yield item;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.puller = resolve));
      this.puller = undefined;
    }
  }
}
