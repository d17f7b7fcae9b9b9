/**
 * The contract, enforced: every answer the local server gives during the tests is checked
 * against openapi.json (contract-setup.ts). The check itself is the one `npm run smoke` uses.
 */
export { contractViolations, openApiDocument, type Described } from '../../tools/openapi/answer-check';
