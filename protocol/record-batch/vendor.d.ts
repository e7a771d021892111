// The compression packages ship no types; these declare only the functions Sluice calls (read from
// their sources in node_modules). All are CommonJS, so they are imported as default exports.

declare module 'snappyjs' {
  const snappy: {
    /** Raw (unframed) Snappy block. Returns the same kind of array it was given. */
    compress(uncompressed: Uint8Array): Uint8Array;
    /** Throws a plain Error when the declared length exceeds maxLength or the stream is malformed. */
    uncompress(compressed: Uint8Array, maxLength?: number): Uint8Array;
  };
  export default snappy;
}

declare module 'lz4js' {
  const lz4: {
    /** Worst-case size of compressing n bytes. */
    compressBound(n: number): number;
    /** Compresses src[sIndex, sIndex + sLength) into dst as one LZ4 block; returns its size, 0 if nothing matched. */
    compressBlock(
      src: Uint8Array,
      dst: Uint8Array,
      sIndex: number,
      sLength: number,
      hashTable: Uint32Array,
    ): number;
    /** Decodes the block src[sIndex, sIndex + sLength) into dst from dIndex; returns the new dIndex. */
    decompressBlock(
      src: Uint8Array,
      dst: Uint8Array,
      sIndex: number,
      sLength: number,
      dIndex: number,
    ): number;
    /** Its own frame writer (dependent blocks, which Kafka rejects): used only by tests, to check that. */
    compress(src: Uint8Array): Uint8Array;
  };
  export default lz4;
}

declare module 'lz4js/xxh32.js' {
  const xxh32: {
    /** XXH32 of src[index, index + len), unsigned. */
    hash(seed: number, src: Uint8Array, index: number, len: number): number;
  };
  export default xxh32;
}
