/**
 * The released contract of /v1, relative to the project root: the OpenAPI document as it was
 * released, which the generated one is compared with (`npm run contract`).
 */
export const CONTRACT_PATH = 'contract/v1.json';
