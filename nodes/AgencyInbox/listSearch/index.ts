export { searchFreelancers } from './searchFreelancers';
export { searchProposals } from './searchProposals';
export { searchRooms } from './searchRooms';
