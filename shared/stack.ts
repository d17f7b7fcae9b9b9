/** How a deployed stage is found: its stack name and the outputs operators and tools read. */
export const stackName = (stage: string): string => `PetStore-${stage}`;

export const stackOutputs = {
  apiUrl: 'ApiUrl',
  petsTableName: 'PetsTableName',
  apiKeysTableName: 'ApiKeysTableName',
  dashboardUrl: 'DashboardUrl',
} as const;
