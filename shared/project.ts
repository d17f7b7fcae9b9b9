/**
 * The project's name, once: the functions' service name (logs and metrics), the realm of
 * `WWW-Authenticate`, the stack's tags and resource names. Renaming the project is this edit.
 */
export const PROJECT_NAME = 'pet-store';

/** The same name as CloudFormation stack names and CloudWatch namespaces spell it: `PetStore`. */
export const PROJECT_NAME_PASCAL = PROJECT_NAME.split('-')
  .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
  .join('');
