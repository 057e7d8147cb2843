import S3rver from 's3rver';
import { mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: mkdtempSync('/tmp/s3c-'), configureBuckets: [{ name: 'lake-test' }] });
const { port } = await server.run();
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
let t = performance.now();
const s3 = require('@aws-sdk/client-s3');
console.log('require', (performance.now() - t).toFixed(1));
t = performance.now();
const c = new s3.S3Client({ endpoint: `http://127.0.0.1:${port}`, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, requestChecksumCalculation: 'WHEN_REQUIRED' });
console.log('client', (performance.now() - t).toFixed(1));
for (let i = 0; i < 3; i++) {
  t = performance.now();
  await c.send(new s3.PutObjectCommand({ Bucket: 'lake-test', Key: `a${i}`, Body: Buffer.alloc(2000) }));
  console.log('put', (performance.now() - t).toFixed(1));
}
t = performance.now();
const { AwsClient } = await import('aws4fetch');
console.log('aws4fetch import', (performance.now() - t).toFixed(1));
await server.close();
