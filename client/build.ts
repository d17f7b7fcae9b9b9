/**
 * Builds the package: dist/index.js, one ES module with no import (esbuild); the declarations come
 * from `tsc -p client` (package.json's build script). Run from client/: `npm run build`.
 */
import { build, type BuildOptions } from 'esbuild';
import { fileURLToPath } from 'node:url';

const entryPoint = fileURLToPath(new URL('src/index.ts', import.meta.url));

/** How the package is bundled: for browsers and Node alike (platform neutral: no Node built-in resolves). */
export const CLIENT_BUILD: BuildOptions = {
  entryPoints: [entryPoint],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  legalComments: 'none',
};

/** The bundle's text, minified or not, without writing it. */
export const bundleClient = async ({ minify }: { minify: boolean }): Promise<string> => {
  const { outputFiles } = await build({ ...CLIENT_BUILD, minify, write: false, outfile: 'index.js' });
  return outputFiles[0]?.text ?? '';
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await build({ ...CLIENT_BUILD, outfile: fileURLToPath(new URL('dist/index.js', import.meta.url)), sourcemap: true });
}
